/**
 * Sign-in and sign-out. A failed sign-in re-renders the form with one message (the same for an unknown email and a
 * wrong password: services/console-sessions.ts `signIn`) and HTTP 401; failures are rate-limited per account (10
 * per 15 minutes) and per client IP (50 per 15 minutes) with express-rate-limit over the database store the API
 * uses (http/rate-limit.ts), so the limits hold across server processes. A successful sign-in does not count.
 */
import { Router, type Request, type RequestHandler } from "express";
import { ipKeyGenerator, rateLimit } from "express-rate-limit";
import type { AppContext } from "../../context";
import { DatabaseRateLimitStore } from "../../http/rate-limit";
import { SIGN_IN_FAILED, signIn, signOut } from "../../services/console-sessions";
import { normalizeEmail } from "../../services/users";
import { clientIp } from "../request";
import { clearSessionCookie, setSessionCookie } from "../session";
import { renderPage } from "../views";

/** Failed sign-ins allowed per account, and per client IP, in one window. */
export const SIGN_IN_LIMITS = { perAccount: 10, perIp: 50, windowMs: 15 * 60 * 1000 } as const;

/** Only same-console paths are followed after sign-in (no open redirect). */
function safeNext(value: unknown): string {
  return typeof value === "string" && /^\/console\/[^/\\]?/.test(value) && !value.startsWith("//") ? value : "/console/";
}

function renderSignIn(req: Request, res: Parameters<RequestHandler>[1], status: number, message?: string) {
  const body = (req.body ?? {}) as Record<string, string | undefined>;
  renderPage(
    req,
    res,
    "sign-in",
    {
      title: "Sign in",
      email: typeof body.email === "string" ? body.email : "",
      next: safeNext(body.next ?? req.query.next),
      errors: message ? [{ field: "email", message }] : [],
    },
    status,
  );
}

function signInLimiter(ctx: AppContext, limit: number, key: (req: Request) => string): RequestHandler {
  return rateLimit({
    windowMs: SIGN_IN_LIMITS.windowMs,
    limit,
    store: new DatabaseRateLimitStore(ctx.prisma),
    skipSuccessfulRequests: true,
    standardHeaders: "draft-6",
    legacyHeaders: false,
    keyGenerator: key,
    validate: { keyGeneratorIpFallback: false, trustProxy: false },
    handler: (req, res) => {
      renderSignIn(req, res, 429, "Too many failed sign-in attempts. Wait 15 minutes, then try again.");
    },
  });
}

/** GET/POST /sign-in, POST /sign-out. */
export function signInRouter(ctx: AppContext): Router {
  const router = Router();
  const perIp = signInLimiter(ctx, SIGN_IN_LIMITS.perIp, (req) => `console-sign-in-ip:${ipKeyGenerator(req.ip ?? "unknown")}`);
  const perAccount = signInLimiter(
    ctx,
    SIGN_IN_LIMITS.perAccount,
    (req) => `console-sign-in-account:${normalizeEmail(String((req.body as Record<string, unknown>)?.email ?? ""))}`,
  );

  router.get("/sign-in", (req, res) => {
    if (req.consoleSession) return res.redirect(303, safeNext(req.query.next));
    renderSignIn(req, res, 200);
  });

  router.post("/sign-in", perIp, perAccount, async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const result = await signIn(ctx.prisma, {
      email: typeof body.email === "string" ? body.email : "",
      password: typeof body.password === "string" ? body.password : "",
      ip: clientIp(req),
    });
    if (!result) return renderSignIn(req, res, 401, SIGN_IN_FAILED);
    // A new session id at every sign-in (no fixation); a previous session of this browser ends.
    if (req.consoleSession) await signOut(ctx.prisma, req.consoleSession.idHash);
    setSessionCookie(req, res, result.sessionId);
    res.redirect(303, safeNext(body.next));
  });

  router.post("/sign-out", async (req, res) => {
    if (req.consoleSession) await signOut(ctx.prisma, req.consoleSession.idHash);
    clearSessionCookie(req, res);
    res.redirect(303, "/console/sign-in");
  });

  return router;
}

/**
 * Sign-in and sign-out. A failed sign-in re-renders the form with one message (the same for an unknown email and a
 * wrong password: services/console-sessions.ts `signIn`) and HTTP 401; failures are rate-limited per account and
 * per client IP (console/failure-limits.ts). A user with two-factor sign-in gets a session pending the second
 * factor and goes on to the second step (pages/two-factor.ts).
 */
import { Router, type Request, type RequestHandler } from "express";
import type { AppContext } from "../../context";
import { SIGN_IN_FAILED, signIn, signOut } from "../../services/console-sessions";
import { normalizeEmail } from "../../services/users";
import { failureLimiters, SIGN_IN_LIMITS } from "../failure-limits";
import { clientIp } from "../request";
import { clearSessionCookie, SECOND_STEP_PATH, setSessionCookie } from "../session";
import { renderPage } from "../views";

export { SIGN_IN_LIMITS };

/** Only same-console paths are followed after sign-in (no open redirect). */
export function safeNext(value: unknown): string {
  return typeof value === "string" && value.startsWith("/console/") && !/[\\\s]/.test(value) ? value : "/console/";
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

/** GET/POST /sign-in, POST /sign-out. */
export function signInRouter(ctx: AppContext): Router {
  const router = Router();
  const limits = failureLimiters(
    ctx,
    "console-sign-in",
    SIGN_IN_LIMITS,
    (req) => normalizeEmail(String((req.body as Record<string, unknown>)?.email ?? "")),
    (req, res) => renderSignIn(req, res, 429, "Too many failed sign-in attempts. Wait 15 minutes, then try again."),
  );

  router.get("/sign-in", (req, res) => {
    if (req.consoleSession) return res.redirect(303, safeNext(req.query.next));
    renderSignIn(req, res, 200);
  });

  router.post("/sign-in", ...limits, async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const result = await signIn(ctx.prisma, {
      email: typeof body.email === "string" ? body.email : "",
      password: typeof body.password === "string" ? body.password : "",
      ip: clientIp(req),
    });
    if (!result) return renderSignIn(req, res, 401, SIGN_IN_FAILED);
    // A new session id at every sign-in (no fixation); a previous session of this browser ends.
    const previous = req.consoleSession ?? req.pendingSignIn;
    if (previous) await signOut(ctx.prisma, previous.idHash);
    setSessionCookie(req, res, result.sessionId);
    const next = safeNext(body.next);
    res.redirect(303, result.secondFactorPending ? `${SECOND_STEP_PATH}?next=${encodeURIComponent(next)}` : next);
  });

  router.post("/sign-out", async (req, res) => {
    const session = req.consoleSession ?? req.pendingSignIn;
    if (session) await signOut(ctx.prisma, session.idHash);
    clearSessionCookie(req, res);
    res.redirect(303, "/console/sign-in");
  });

  return router;
}

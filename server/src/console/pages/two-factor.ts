/**
 * Two-factor sign-in (issue 19 item 7; services/two-factor.ts):
 * - `secondStepRouter`: the second step of sign-in (`/sign-in/two-factor`), the one page a session pending its
 *   second factor reaches (besides sign-out). A current code or a recovery code promotes it to a new, signed-in
 *   session; wrong codes are rate-limited per account and per IP (console/failure-limits.ts).
 * - `twoFactorRouter`: the "Two-factor sign-in" page of every user (`/two-factor`): set up (QR code and the secret as
 *   text, confirmed by a code), new recovery codes, turn off (with a code); for owners, the company's "require
 *   two-factor sign-in for everyone". Mounted before `requireTwoFactorSetUp`, so a user whose company requires it
 *   can reach it (and only it).
 */
import { Router, type Request, type Response } from "express";
import type { AppContext } from "../../context";
import { completeSecondFactor } from "../../services/console-sessions";
import {
  beginSetup,
  confirmSetup,
  disableOwnTwoFactor,
  pendingSetup,
  regenerateRecoveryCodes,
  setCompanyTwoFactorRequirement,
  twoFactorStatus,
} from "../../services/two-factor";
import { failureLimiters, SECOND_FACTOR_LIMITS } from "../failure-limits";
import { notify } from "../flash";
import { formErrors, type FieldError } from "../forms";
import { clientIp, signedIn } from "../request";
import { requireRole, setSessionCookie, TWO_FACTOR_PATH } from "../session";
import { renderPage } from "../views";
import { safeNext } from "./sign-in";

const TOO_MANY = "Too many wrong codes. Wait 15 minutes, then try again.";
const WRONG_CODE = "The code is not correct. Enter the current code from your authenticator app, or an unused recovery code.";

function body(req: Request): Record<string, unknown> {
  return (req.body ?? {}) as Record<string, unknown>;
}

/** The second-factor limiters: the account is the user of the pending (or signed-in) session. */
function codeLimiters(ctx: AppContext, refuse: (req: Request, res: Response) => void) {
  return failureLimiters(ctx, "console-2fa", SECOND_FACTOR_LIMITS, (req) => (req.pendingSignIn ?? req.consoleSession)?.user.id ?? "none", refuse);
}

function renderSecondStep(req: Request, res: Response, status: number, errors: FieldError[] = []) {
  renderPage(req, res, "sign-in-two-factor", { title: "Two-factor sign-in", next: safeNext(body(req).next ?? req.query.next), errors }, status);
}

/** GET/POST /sign-in/two-factor: the second step of sign-in. */
export function secondStepRouter(ctx: AppContext): Router {
  const router = Router();
  const limits = codeLimiters(ctx, (req, res) => {
    const field = body(req).recovery_code !== undefined ? "recovery-code" : "code";
    renderSecondStep(req, res, 429, [{ field, message: TOO_MANY }]);
  });

  router.get("/sign-in/two-factor", (req, res) => {
    if (req.consoleSession) return res.redirect(303, safeNext(req.query.next));
    if (!req.pendingSignIn) return res.redirect(303, "/console/sign-in");
    renderSecondStep(req, res, 200);
  });

  router.post("/sign-in/two-factor", (req, res, next) => (req.pendingSignIn ? next() : res.redirect(303, "/console/sign-in")), ...limits, async (req, res) => {
    const pending = req.pendingSignIn!;
    const form = body(req);
    const usesRecovery = form.recovery_code !== undefined;
    const sessionId = await completeSecondFactor(
      ctx.prisma,
      pending.idHash,
      { id: pending.user.id, email: pending.user.email, companyId: pending.user.company.id },
      { code: usesRecovery ? undefined : form.code, recoveryCode: usesRecovery ? form.recovery_code : undefined, ip: clientIp(req) },
    );
    if (!sessionId) return renderSecondStep(req, res, 401, [{ field: usesRecovery ? "recovery-code" : "code", message: WRONG_CODE }]);
    setSessionCookie(req, res, sessionId);
    res.redirect(303, safeNext(form.next));
  });

  return router;
}

async function renderTwoFactor(ctx: AppContext, req: Request, res: Response, errors: FieldError[] = [], status = errors.length ? 400 : 200) {
  const user = signedIn(req);
  const [status2fa, setup] = await Promise.all([twoFactorStatus(ctx.prisma, user.id), pendingSetup(ctx.prisma, user.id)]);
  renderPage(
    req,
    res,
    "two-factor",
    {
      title: "Two-factor sign-in",
      status: status2fa,
      setup: setup && {
        secret: setup.secret,
        secretGroups: setup.secret.match(/.{1,4}/g)!.join(" "),
        qrDataUri: `data:image/svg+xml;base64,${Buffer.from(setup.qrSvg).toString("base64")}`,
      },
      isOwner: user.role === "owner",
      errors,
    },
    status,
  );
}

function byUser(req: Request) {
  const user = signedIn(req);
  return { actor: { type: "user" as const, id: user.id, email: user.email }, ip: clientIp(req) };
}

function recoveryCodesNotice(codes: string[]) {
  return {
    label: "Recovery codes (each works once)",
    value: codes.join(" "),
  };
}

/** GET /two-factor and its forms. */
export function twoFactorRouter(ctx: AppContext): Router {
  const router = Router();
  const refuse = (req: Request, res: Response) => {
    const field = req.path.endsWith("/disable") ? "disable-code" : req.path.endsWith("/recovery-codes") ? "regenerate-code" : "code";
    void renderTwoFactor(ctx, req, res, [{ field, message: TOO_MANY }], 429).catch(() => res.status(429).end());
  };
  const limits = codeLimiters(ctx, refuse);

  router.get("/two-factor", (req, res) => renderTwoFactor(ctx, req, res));

  router.post("/two-factor/setup", async (req, res) => {
    try {
      await beginSetup(ctx.prisma, signedIn(req).id);
      res.redirect(303, `${TWO_FACTOR_PATH}#setup`);
    } catch (err) {
      await renderTwoFactor(ctx, req, res, formErrors(err, {}, "code"));
    }
  });

  router.post("/two-factor/confirm", ...limits, async (req, res) => {
    try {
      const codes = await confirmSetup(ctx.prisma, signedIn(req).id, body(req).code, { ...byUser(req), sessionHash: req.consoleSession!.idHash });
      await notify(ctx.prisma, req, {
        kind: "success",
        message: "Two-factor sign-in is on, and your other sessions are signed out. Save these recovery codes somewhere safe: each signs you in once if you lose your authenticator. They are not shown again.",
        secret: recoveryCodesNotice(codes),
      });
      res.redirect(303, TWO_FACTOR_PATH);
    } catch (err) {
      await renderTwoFactor(ctx, req, res, formErrors(err, { code: "code" }, "code"));
    }
  });

  router.post("/two-factor/recovery-codes", ...limits, async (req, res) => {
    try {
      const codes = await regenerateRecoveryCodes(ctx.prisma, signedIn(req).id, body(req).code, byUser(req));
      await notify(ctx.prisma, req, { kind: "success", message: "New recovery codes made; the old ones no longer work. They are not shown again.", secret: recoveryCodesNotice(codes) });
      res.redirect(303, TWO_FACTOR_PATH);
    } catch (err) {
      await renderTwoFactor(ctx, req, res, formErrors(err, { code: "regenerate-code" }, "regenerate-code"));
    }
  });

  router.post("/two-factor/disable", ...limits, async (req, res) => {
    const form = body(req);
    try {
      await disableOwnTwoFactor(ctx.prisma, signedIn(req).id, { code: form.code }, { ...byUser(req), sessionHash: req.consoleSession!.idHash });
      await notify(ctx.prisma, req, { kind: "success", message: "Two-factor sign-in is off. Your other sessions were signed out." });
      res.redirect(303, TWO_FACTOR_PATH);
    } catch (err) {
      await renderTwoFactor(ctx, req, res, formErrors(err, { code: "disable-code" }, "disable-code"));
    }
  });

  router.post("/two-factor/requirement", requireRole("owner"), async (req, res) => {
    const required = body(req).require_two_factor === "on";
    try {
      await setCompanyTwoFactorRequirement(ctx.prisma, signedIn(req).company.id, required, byUser(req));
      await notify(ctx.prisma, req, {
        kind: "success",
        message: required ? "Everyone in the company now needs two-factor sign-in." : "Two-factor sign-in is no longer required.",
      });
      res.redirect(303, TWO_FACTOR_PATH);
    } catch (err) {
      await renderTwoFactor(ctx, req, res, formErrors(err, { require_two_factor: "require-two-factor" }, "require-two-factor"));
    }
  });

  return router;
}

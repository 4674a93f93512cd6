/**
 * The OAuth interaction page (issue 32): where oidc-provider sends the browser during an authorization request
 * (oauth/provider.ts `interactionPath`). Behind the console's sign-in guard, so sign-in (with its second factor)
 * is the console's own; the `login` step is then finished at once with the signed-in user, and the `consent` step
 * shows the app, its redirect host and the requested scopes as checkboxes (oauth/consent.ts).
 */
import { Router, type Response } from "express";
import type { AppContext } from "../../context";
import { decideConsent, finishLogin, interactionStep } from "../../oauth/consent";
import { clientIp, signedIn } from "../request";
import { renderPage } from "../views";

/** The console path of the interaction pages (relative to /console). */
const PATH = "/oauth/interaction/:uid";

/** Widens this response's CSP `form-action` to the app's redirect origin: the consent form's answer ends there. */
function allowFormActionTo(res: Response, origin: string): void {
  const csp = res.getHeader("content-security-policy");
  if (typeof csp === "string" && /^https?:\/\/[^\s;,'"]+$/.test(origin)) {
    res.setHeader("content-security-policy", csp.replace(/form-action 'self'/, `form-action 'self' ${origin}`));
  }
}

/** The router of the interaction pages. */
export function oauthInteractionRouter(ctx: AppContext): Router {
  const router = Router();
  router.get(PATH, async (req, res) => {
    const user = signedIn(req);
    const uid = String(req.params.uid).slice(0, 100);
    const step = await interactionStep(ctx, req, res, uid, user);
    if (step.step === "login") return finishLogin(ctx, req, res, user.id);
    allowFormActionTo(res, step.view.redirectOrigin);
    renderPage(req, res, "oauth/consent", { title: `Connect ${step.view.appName} to Stageline`, consent: step.view, company: user.company.name });
  });
  router.post(PATH, async (req, res) => {
    const user = signedIn(req);
    const uid = String(req.params.uid).slice(0, 100);
    const body = (req.body ?? {}) as Record<string, unknown>;
    const raw = body.scopes;
    const ticked = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).filter((s): s is string => typeof s === "string").slice(0, 20);
    await decideConsent(ctx, req, res, uid, { id: user.id, email: user.email, role: user.role, companyId: user.company.id, ip: clientIp(req) }, { approve: body.decision === "allow", ticked });
  });
  return router;
}

/**
 * OAuth in the console (issue 32, CONTRACT "Connect with OAuth 2.1"): "Connected apps" (the company's grants; a
 * member sees and revokes their own; revoke after a confirmation page) and "Developer apps" (owners and admins
 * register clients, a confidential client's secret shown once in the one-time notice, delete after a confirmation).
 * Thin: services/oauth-grants.ts and services/oauth-clients.ts do the work and the audit entries.
 */
import { Router, type Request, type Response } from "express";
import type { AppContext } from "../../context";
import { DEVELOPER_APPS_MIN_ROLE } from "../../services/connected-apps-policy";
import {
  CLIENT_NAME_MAX,
  REDIRECT_URIS_MAX,
  REDIRECT_URI_MAX_LENGTH,
  deleteDeveloperApp,
  getDeveloperApp,
  listDeveloperApps,
  registerClient,
  type ClientManager,
} from "../../services/oauth-clients";
import { getConnectedApp, listConnectedApps, revokeConnectedApp, type GrantViewer } from "../../services/oauth-grants";
import { notify } from "../flash";
import { formErrors, type FieldError } from "../forms";
import { clientIp, signedIn } from "../request";
import { requireRole } from "../session";
import { renderPage } from "../views";

function viewer(req: Request): GrantViewer {
  const user = signedIn(req);
  return { actor: { type: "user", id: user.id, email: user.email }, userId: user.id, role: user.role, companyId: user.company.id, ip: clientIp(req) };
}

function manager(req: Request): ClientManager {
  const user = signedIn(req);
  return { actor: { type: "user", id: user.id, email: user.email }, companyId: user.company.id, ip: clientIp(req) };
}

async function renderDeveloperApps(ctx: AppContext, req: Request, res: Response, form: { values?: Record<string, unknown>; errors?: FieldError[] } = {}) {
  const values = form.values ?? {};
  renderPage(
    req,
    res,
    "oauth/developer-apps",
    {
      title: "Developer apps",
      apps: await listDeveloperApps(ctx.prisma, signedIn(req).company.id),
      limits: { name: CLIENT_NAME_MAX, uris: REDIRECT_URIS_MAX, uri: REDIRECT_URI_MAX_LENGTH },
      form: {
        name: typeof values.name === "string" ? values.name.slice(0, 1000) : "",
        redirect_uris: typeof values.redirect_uris === "string" ? values.redirect_uris.slice(0, 30_000) : "",
        type: values.type === "confidential" ? "confidential" : "public",
      },
      errors: form.errors ?? [],
    },
    form.errors?.length ? 400 : 200,
  );
}

/** The Connected apps and Developer apps sections. */
export function oauthAppsRouter(ctx: AppContext): Router {
  const router = Router();

  router.get("/connected-apps", async (req, res) => {
    const v = viewer(req);
    renderPage(req, res, "oauth/connected-apps", { title: "Connected apps", apps: await listConnectedApps(ctx.prisma, v), seesAll: v.role !== "member" });
  });

  router.get("/connected-apps/:grantId/revoke", async (req, res) => {
    const app = await getConnectedApp(ctx.prisma, viewer(req), String(req.params.grantId));
    renderPage(req, res, "oauth/revoke-grant", { title: `Revoke access of "${app.appName}"?`, app });
  });

  router.post("/connected-apps/:grantId/revoke", async (req, res) => {
    const app = await revokeConnectedApp(ctx.prisma, viewer(req), String(req.params.grantId));
    await notify(ctx.prisma, req, { kind: "success", message: `Access of "${app.appName}" revoked. Its tokens now get 401.` });
    res.redirect(303, "/console/connected-apps");
  });

  router.get("/developer-apps", requireRole(DEVELOPER_APPS_MIN_ROLE), (req, res) => renderDeveloperApps(ctx, req, res));

  router.post("/developer-apps", requireRole(DEVELOPER_APPS_MIN_ROLE), async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    try {
      const { app, clientSecret } = await registerClient(ctx.prisma, { name: body.name, redirect_uris: body.redirect_uris, type: body.type }, manager(req));
      await notify(ctx.prisma, req, {
        kind: "success",
        message: clientSecret
          ? `App "${app.name}" registered with client ID ${app.clientId}. Copy its client secret now: it is shown only once.`
          : `App "${app.name}" registered with client ID ${app.clientId}. It is a public client: it uses PKCE and has no secret.`,
        ...(clientSecret ? { secret: { label: "Client secret", value: clientSecret } } : {}),
      });
      res.redirect(303, "/console/developer-apps");
    } catch (err) {
      const errors = formErrors(err, { name: "name", redirect_uris: "redirect_uris", type: "type-public" }, "name");
      await renderDeveloperApps(ctx, req, res, { values: body, errors });
    }
  });

  router.get("/developer-apps/:clientId/delete", requireRole(DEVELOPER_APPS_MIN_ROLE), async (req, res) => {
    const app = await getDeveloperApp(ctx.prisma, signedIn(req).company.id, String(req.params.clientId));
    renderPage(req, res, "oauth/delete-client", { title: `Delete app "${app.name}"?`, app });
  });

  router.post("/developer-apps/:clientId/delete", requireRole(DEVELOPER_APPS_MIN_ROLE), async (req, res) => {
    const app = await deleteDeveloperApp(ctx.prisma, String(req.params.clientId), manager(req));
    await notify(ctx.prisma, req, { kind: "success", message: `App "${app.name}" deleted, with every grant and token issued to it.` });
    res.redirect(303, "/console/developer-apps");
  });

  return router;
}

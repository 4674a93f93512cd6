/**
 * API keys (spec "Authentication", issue 10 "API keys page"): list for everyone; create, rename and revoke for
 * admins and owners, through the same services/api-keys.ts functions as the admin CLI and admin API. A new key is
 * shown once, on the page the create redirects to (an encrypted one-time notice, console/flash.ts), never in a URL.
 */
import { Router, type Request, type Response } from "express";
import { SCOPES } from "@stageline/shared";
import type { AppContext } from "../../context";
import { createKey, getKey, keyStatus, listKeys, renameKey, revokeKey, type KeyManager } from "../../services/api-keys";
import { formErrors, type FieldError } from "../forms";
import { notify } from "../flash";
import { clientIp, signedIn } from "../request";
import { requireRole } from "../session";
import { renderPage } from "../views";

function manager(req: Request): KeyManager {
  const user = signedIn(req);
  return { actor: { type: "user", id: user.id, email: user.email }, companyId: user.company.id, ip: clientIp(req) };
}

/** The checked scopes of a form post: one `scopes` value per ticked checkbox. */
function postedScopes(body: Record<string, unknown>): string[] {
  const raw = body.scopes;
  return raw === undefined ? [] : Array.isArray(raw) ? raw.map(String) : [String(raw)];
}

async function renderList(ctx: AppContext, req: Request, res: Response, form: { values?: Record<string, unknown>; errors?: FieldError[] } = {}) {
  const now = new Date();
  const keys = (await listKeys(ctx.prisma, signedIn(req).company.id)).map((k) => ({ ...k, status: keyStatus(k, now) }));
  const values = form.values ?? {};
  renderPage(
    req,
    res,
    "keys/list",
    {
      title: "API keys",
      keys,
      scopes: SCOPES,
      form: {
        name: typeof values.name === "string" ? values.name : "",
        expires_on: typeof values.expires_on === "string" ? values.expires_on : "",
        scopes: form.values ? postedScopes(values) : [...SCOPES],
      },
      errors: form.errors ?? [],
    },
    form.errors?.length ? 400 : 200,
  );
}

/** The API keys section. */
export function keysRouter(ctx: AppContext): Router {
  const router = Router();

  router.get("/keys", (req, res) => renderList(ctx, req, res));

  router.post("/keys", requireRole("admin"), async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const scopes = postedScopes(body);
    const expiresOn = typeof body.expires_on === "string" ? body.expires_on.trim() : "";
    if (!scopes.length) {
      return renderList(ctx, req, res, { values: body, errors: [{ field: `scope-${SCOPES[0]}`, message: "Choose at least one scope." }] });
    }
    if (expiresOn && !/^\d{4}-\d{2}-\d{2}$/.test(expiresOn)) {
      return renderList(ctx, req, res, { values: body, errors: [{ field: "expires_on", message: "Enter the expiry date as YYYY-MM-DD, or leave it empty." }] });
    }
    try {
      const created = await createKey(
        ctx.prisma,
        {
          company_id: signedIn(req).company.id,
          name: typeof body.name === "string" ? body.name : "",
          scopes,
          // The key stops working at the end of the chosen day (UTC).
          ...(expiresOn ? { expires_at: `${expiresOn}T23:59:59.999Z` } : {}),
        },
        manager(req),
      );
      await notify(ctx.prisma, req, {
        kind: "success",
        message: `API key "${created.name}" created. Copy it now: it is shown only once.`,
        secret: { label: "Your new API key", value: created.key },
      });
      res.redirect(303, "/console/keys");
    } catch (err) {
      const errors = formErrors(err, { name: "name", expires_at: "expires_on", scopes: `scope-${SCOPES[0]}` }, "name");
      await renderList(ctx, req, res, { values: body, errors });
    }
  });

  router.get("/keys/:keyId/rename", requireRole("admin"), async (req, res) => {
    const key = await getKey(ctx.prisma, String(req.params.keyId), manager(req));
    renderPage(req, res, "keys/rename", { title: `Rename API key "${key.name}"`, key, name: key.name });
  });

  router.post("/keys/:keyId/rename", requireRole("admin"), async (req, res) => {
    const by = manager(req);
    const key = await getKey(ctx.prisma, String(req.params.keyId), by);
    const name = typeof req.body?.name === "string" ? req.body.name : "";
    try {
      const renamed = await renameKey(ctx.prisma, key.id, { name }, by);
      await notify(ctx.prisma, req, { kind: "success", message: `API key renamed to "${renamed.name}".` });
      res.redirect(303, "/console/keys");
    } catch (err) {
      const errors = formErrors(err, { name: "name" }, "name");
      renderPage(req, res, "keys/rename", { title: `Rename API key "${key.name}"`, key, name, errors }, 400);
    }
  });

  router.get("/keys/:keyId/revoke", requireRole("admin"), async (req, res) => {
    const key = await getKey(ctx.prisma, String(req.params.keyId), manager(req));
    renderPage(req, res, "keys/revoke", { title: `Revoke API key "${key.name}"?`, key, status: keyStatus(key) });
  });

  router.post("/keys/:keyId/revoke", requireRole("admin"), async (req, res) => {
    const key = await revokeKey(ctx.prisma, String(req.params.keyId), manager(req));
    await notify(ctx.prisma, req, { kind: "success", message: `API key "${key.name}" revoked. Requests with it now get 401.` });
    res.redirect(303, "/console/keys");
  });

  return router;
}

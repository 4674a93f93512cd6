/**
 * Your profile (`/profile`, every signed-in user; issue 30 item 4, CONTRACT "People"): the user's own display name,
 * which GET /v1/ext/users and every task's `assignee` show. Each user changes only their own (the session's user id,
 * never one from the form), CSRF-checked like every console form, audited as `user.name_changed`
 * (services/users.ts `setDisplayName`).
 */
import { Router, type Request, type Response } from "express";
import type { AppContext } from "../../context";
import { getUser, setDisplayName } from "../../services/users";
import { notify } from "../flash";
import { formErrors, type FieldError } from "../forms";
import { clientIp, signedIn } from "../request";
import { renderPage } from "../views";

/** The path of the page. */
export const PROFILE_PATH = "/console/profile";

async function renderProfile(ctx: AppContext, req: Request, res: Response, form: { name?: unknown; errors?: FieldError[] } = {}) {
  const user = signedIn(req);
  const me = await getUser(ctx.prisma, user.id, user.company.id);
  const errors = form.errors ?? [];
  const name = form.name !== undefined ? (typeof form.name === "string" ? form.name : "") : (me.name ?? "");
  renderPage(req, res, "profile", { title: "Your profile", me, name, errors }, errors.length ? 400 : 200);
}

/** GET /profile and POST /profile/name. */
export function profileRouter(ctx: AppContext): Router {
  const router = Router();

  router.get("/profile", (req, res) => renderProfile(ctx, req, res));

  router.post("/profile/name", async (req, res) => {
    const user = signedIn(req);
    const body = (req.body ?? {}) as Record<string, unknown>;
    try {
      const by = { actor: { type: "user" as const, id: user.id, email: user.email }, companyId: user.company.id, ip: clientIp(req) };
      const saved = await setDisplayName(ctx.prisma, user.company.id, user.id, { name: body.name }, by);
      await notify(ctx.prisma, req, { kind: "success", message: saved.name === null ? "Your display name was removed." : `Your display name is now "${saved.name}".` });
      res.redirect(303, PROFILE_PATH);
    } catch (err) {
      await renderProfile(ctx, req, res, { name: body.name, errors: formErrors(err, { name: "display-name" }, "display-name") });
    }
  });

  return router;
}

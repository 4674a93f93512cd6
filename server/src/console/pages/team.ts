/**
 * Team (owner only; issue 10 "Team page"): the company's users with their roles, open invitations, invite by
 * email (a one-time link valid 7 days, shown once to copy: no mail is sent), change a role, remove a user after a
 * confirmation. The last owner cannot be demoted or removed (services/users.ts). Shows who has two-factor sign-in
 * on and resets another user's (services/two-factor.ts `resetTwoFactor`; they set it up again).
 */
import { Router, type Request, type Response } from "express";
import type { AppContext } from "../../context";
import { resetTwoFactor, usersWithTwoFactor } from "../../services/two-factor";
import { changeRole, getUser, inviteUser, listOpenInvites, listUsers, removeUser, ROLES, type UserManager } from "../../services/users";
import { formErrors, type FieldError } from "../forms";
import { consoleDate } from "../dates";
import { notify } from "../flash";
import { clientIp, signedIn } from "../request";
import { requireRole } from "../session";
import { renderPage } from "../views";

function manager(req: Request): UserManager & { actor: { type: "user"; id: string; email: string } } {
  const user = signedIn(req);
  return { actor: { type: "user", id: user.id, email: user.email }, companyId: user.company.id, ip: clientIp(req) };
}

async function renderTeam(ctx: AppContext, req: Request, res: Response, form: { invite?: Record<string, unknown>; errors?: FieldError[] } = {}) {
  const companyId = signedIn(req).company.id;
  const [users, invites, withTwoFactor] = await Promise.all([
    listUsers(ctx.prisma, companyId),
    listOpenInvites(ctx.prisma, companyId),
    usersWithTwoFactor(ctx.prisma, companyId),
  ]);
  const invite = form.invite ?? {};
  renderPage(
    req,
    res,
    "team/list",
    {
      title: "Team",
      users: users.map((u) => ({ ...u, twoFactor: withTwoFactor.has(u.id) })),
      invites,
      roles: ROLES,
      invite: { email: typeof invite.email === "string" ? invite.email : "", role: typeof invite.role === "string" ? invite.role : "member" },
      errors: form.errors ?? [],
    },
    form.errors?.length ? 400 : 200,
  );
}

/** The Team section. */
export function teamRouter(ctx: AppContext): Router {
  const router = Router();
  router.use("/team", requireRole("owner"));

  router.get("/team", (req, res) => renderTeam(ctx, req, res));

  router.post("/team/invites", async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    try {
      const invite = await inviteUser(ctx.prisma, signedIn(req).company.id, { email: body.email, role: body.role }, manager(req));
      await notify(ctx.prisma, req, {
        kind: "success",
        message: `Invitation for ${invite.email} (${invite.role}) created. Send them this link; it works once, until ${consoleDate(invite.expiresAt)}.`,
        secret: { label: `Invitation link for ${invite.email}`, value: `${req.protocol}://${req.get("host")}/console/invite/${invite.token}` },
      });
      res.redirect(303, "/console/team");
    } catch (err) {
      await renderTeam(ctx, req, res, { invite: body, errors: formErrors(err, { email: "invite-email", role: "invite-role" }, "invite-email") });
    }
  });

  router.post("/team/users/:userId/role", async (req, res) => {
    const userId = String(req.params.userId);
    try {
      const user = await changeRole(ctx.prisma, userId, { role: req.body?.role }, manager(req));
      await notify(ctx.prisma, req, { kind: "success", message: `${user.email} is now ${user.role}.` });
      res.redirect(303, "/console/team");
    } catch (err) {
      await renderTeam(ctx, req, res, { errors: formErrors(err, {}, `role-${userId}`) });
    }
  });

  router.get("/team/users/:userId/remove", async (req, res) => {
    const user = await getUser(ctx.prisma, String(req.params.userId), signedIn(req).company.id);
    renderPage(req, res, "team/remove", { title: `Remove ${user.email}?`, target: user });
  });

  router.post("/team/users/:userId/remove", async (req, res) => {
    const userId = String(req.params.userId);
    try {
      const user = await removeUser(ctx.prisma, userId, manager(req));
      await notify(ctx.prisma, req, { kind: "success", message: `${user.email} was removed and signed out.` });
      res.redirect(303, "/console/team");
    } catch (err) {
      await renderTeam(ctx, req, res, { errors: formErrors(err, {}, `role-${userId}`) });
    }
  });

  router.post("/team/users/:userId/reset-two-factor", async (req, res) => {
    const userId = String(req.params.userId);
    if (userId === signedIn(req).id) {
      return renderTeam(ctx, req, res, { errors: [{ field: `role-${userId}`, message: "Turn off your own two-factor sign-in on the Two-factor sign-in page." }] });
    }
    const user = await resetTwoFactor(ctx.prisma, userId, manager(req));
    await notify(ctx.prisma, req, { kind: "success", message: `Two-factor sign-in of ${user.email} was reset and they were signed out; they set it up again.` });
    res.redirect(303, "/console/team");
  });

  return router;
}

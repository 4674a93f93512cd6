/**
 * Accepting an invitation (public: the invitee has no account yet). GET /invite/:token shows the form to choose a
 * password; POST creates the user (services/users.ts `acceptInvite`: the link works once, for 7 days) and signs
 * them in. As at sign-in, a session this browser already had (another user's) ends first, so no one stays signed in
 * as someone else behind the new user. An unknown, used or expired link is a 404 page.
 */
import { Router, type Request, type Response } from "express";
import type { AppContext } from "../../context";
import { signIn, signOut } from "../../services/console-sessions";
import { PASSWORD_MIN_LENGTH } from "../../services/password-policy";
import { acceptInvite, findOpenInvite } from "../../services/users";
import { formErrors, type FieldError } from "../forms";
import { clientIp } from "../request";
import { setSessionCookie } from "../session";
import { renderPage } from "../views";

function renderInvite(req: Request, res: Response, invite: { email: string; role: string; companyName: string }, errors: FieldError[] = []) {
  renderPage(
    req,
    res,
    "invite",
    { title: `Join ${invite.companyName} on Stageline`, invite, token: String(req.params.token), minLength: PASSWORD_MIN_LENGTH, errors },
    errors.length ? 400 : 200,
  );
}

/** GET/POST /invite/:token. */
export function inviteRouter(ctx: AppContext): Router {
  const router = Router();

  router.get("/invite/:token", async (req, res) => {
    renderInvite(req, res, await findOpenInvite(ctx.prisma, String(req.params.token)));
  });

  router.post("/invite/:token", async (req, res) => {
    const token = String(req.params.token);
    const invite = await findOpenInvite(ctx.prisma, token);
    const body = (req.body ?? {}) as Record<string, unknown>;
    const password = typeof body.password === "string" ? body.password : "";
    try {
      await acceptInvite(ctx.prisma, token, { password, password_confirmation: typeof body.password_confirmation === "string" ? body.password_confirmation : "" }, clientIp(req));
    } catch (err) {
      return renderInvite(req, res, invite, formErrors(err, { password: "password", password_confirmation: "password_confirmation" }, "password"));
    }
    // A new session id for the new user; a previous session of this browser ends (as at sign-in: no fixation).
    // The browser's previous session ends, signed in or waiting for its second factor, as at sign-in.
    const previous = req.consoleSession ?? req.pendingSignIn;
    if (previous) await signOut(ctx.prisma, previous.idHash);
    const session = await signIn(ctx.prisma, { email: invite.email, password, ip: clientIp(req) });
    if (session) setSessionCookie(req, res, session.sessionId);
    res.redirect(303, session ? "/console/" : "/console/sign-in");
  });

  return router;
}

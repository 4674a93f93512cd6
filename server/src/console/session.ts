/**
 * The console's session cookie and guards. The cookie holds the session id (services/console-sessions.ts keeps
 * only its hash): HttpOnly, SameSite=Lax, Path=/; over https (directly or through a proxy trusted by TRUST_PROXY)
 * also `Secure` with the `__Host-` prefix. `loadSession` puts the session on the request (request.ts); the guards
 * then refuse what the user may not do: `requireSignedIn` (sign-in page, or the second step of a pending sign-in),
 * `requireTwoFactorSetUp` (the two-factor page, when the company requires it) and `requireRole` (403).
 */
import type { Request, RequestHandler, Response } from "express";
import type { PrismaClient } from "../generated/prisma/client";
import { domainError } from "../services/errors";
import { resolveSession, SESSION_ABSOLUTE_MS } from "../services/console-sessions";
import { roleAtLeast, type Role } from "../services/users";
import { readNotice } from "./flash";

/** The session cookie's name for `req`: `__Host-stageline.session` over https, `stageline.session` otherwise. */
export function sessionCookieName(req: Request): string {
  return req.secure ? "__Host-stageline.session" : "stageline.session";
}

/** Sets the session cookie (at sign-in). Its Max-Age is the absolute limit; the server enforces both limits. */
export function setSessionCookie(req: Request, res: Response, sessionId: string): void {
  res.cookie(sessionCookieName(req), sessionId, {
    httpOnly: true,
    sameSite: "lax",
    secure: req.secure,
    path: "/",
    maxAge: SESSION_ABSOLUTE_MS,
  });
}

/** Deletes the session cookie (sign-out, or a cookie whose session has ended). */
export function clearSessionCookie(req: Request, res: Response): void {
  res.clearCookie(sessionCookieName(req), { httpOnly: true, sameSite: "lax", secure: req.secure, path: "/" });
}

/**
 * Resolves the cookie's session (if any) onto `req.consoleSession` and its notice onto `res.locals.notice`; a session
 * still waiting for its second factor goes onto `req.pendingSignIn` instead (it is not signed in).
 */
export function loadSession(prisma: PrismaClient): RequestHandler {
  return async (req, res, next) => {
    const rawId = (req.cookies as Record<string, string | undefined>)[sessionCookieName(req)];
    if (!rawId) return next();
    const session = await resolveSession(prisma, rawId);
    if (!session) {
      clearSessionCookie(req, res);
      return next();
    }
    if (session.secondFactorPending) {
      req.pendingSignIn = { idHash: session.idHash, rawId, user: session.user };
      return next();
    }
    req.consoleSession = { ...session, rawId };
    res.locals.notice = readNotice(session.flash, rawId);
    next();
  };
}

/** The path of sign-in's second step (two-factor code). */
export const SECOND_STEP_PATH = "/console/sign-in/two-factor";
/** The path of the two-factor settings page. */
export const TWO_FACTOR_PATH = "/console/two-factor";

/**
 * Sends a request without a session to the sign-in page, and one of a session pending its second factor to the
 * second step (GET: back to the page afterwards).
 */
export const requireSignedIn: RequestHandler = (req, res, next) => {
  if (req.consoleSession) return next();
  const back = req.method === "GET" ? `?next=${encodeURIComponent(req.originalUrl)}` : "";
  res.redirect(303, `${req.pendingSignIn ? SECOND_STEP_PATH : "/console/sign-in"}${back}`);
};

/**
 * When the user's company requires two-factor sign-in and the user has not set it up, sends every request to the
 * two-factor page (mounted before this guard), so nothing else is reachable until it is on.
 */
export const requireTwoFactorSetUp: RequestHandler = (req, res, next) => {
  const user = req.consoleSession?.user;
  if (!user || user.twoFactorEnabled || !user.company.requireTwoFactor) return next();
  res.redirect(303, TWO_FACTOR_PATH);
};

/** 403 unless the signed-in user's role is at least `role` (`owner` > `admin` > `member`). */
export function requireRole(role: Role): RequestHandler {
  return (req, _res, next) => {
    const user = req.consoleSession?.user;
    if (user && roleAtLeast(user.role, role)) return next();
    next(domainError("insufficient_scope", `This needs the ${role} role; you are signed in as ${user?.role ?? "nobody"}.`));
  };
}

/**
 * The console's session cookie and guards. The cookie holds the session id (services/console-sessions.ts keeps
 * only its hash): HttpOnly, SameSite=Lax, Path=/; over https (directly or through a proxy trusted by TRUST_PROXY)
 * also `Secure` with the `__Host-` prefix. `loadSession` puts the session on the request (request.ts); the guards
 * then refuse what the user may not do: `requireSignedIn` (sign-in page) and `requireRole` (403).
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

/** Resolves the cookie's session (if any) onto `req.consoleSession` and its notice onto `res.locals.notice`. */
export function loadSession(prisma: PrismaClient): RequestHandler {
  return async (req, res, next) => {
    const rawId = (req.cookies as Record<string, string | undefined>)[sessionCookieName(req)];
    if (!rawId) return next();
    const session = await resolveSession(prisma, rawId);
    if (!session) {
      clearSessionCookie(req, res);
      return next();
    }
    req.consoleSession = { ...session, rawId };
    res.locals.notice = readNotice(session.flash, rawId);
    next();
  };
}

/** Sends a request without a session to the sign-in page (GET: back to the page afterwards). */
export const requireSignedIn: RequestHandler = (req, res, next) => {
  if (req.consoleSession) return next();
  const back = req.method === "GET" ? `?next=${encodeURIComponent(req.originalUrl)}` : "";
  res.redirect(303, `/console/sign-in${back}`);
};

/** 403 unless the signed-in user's role is at least `role` (`owner` > `admin` > `member`). */
export function requireRole(role: Role): RequestHandler {
  return (req, _res, next) => {
    const user = req.consoleSession?.user;
    if (user && roleAtLeast(user.role, role)) return next();
    next(domainError("insufficient_scope", `This needs the ${role} role; you are signed in as ${user?.role ?? "nobody"}.`));
  };
}

/**
 * What the console puts on each request: the resolved session (with the signed-in user and their company) and the
 * raw session id from the cookie. `signedIn(req)` is the one way a page reaches the user's company: every service
 * call that takes an id also takes `signedIn(req).company.id`, so another company's id is 404.
 */
import type { Request } from "express";
import { domainError } from "../services/errors";
import type { ConsoleSession, SessionUser } from "../services/console-sessions";

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** The console session of this request (set by console/session.ts `loadSession`), when signed in. */
      consoleSession?: ConsoleSession & { rawId: string };
      /**
       * A session past the password step that still needs the second factor (console/session.ts `loadSession`).
       * It is not signed in: it reaches the second-step page and sign-out, nothing else.
       */
      pendingSignIn?: { idHash: string; rawId: string; user: ConsoleSession["user"] };
    }
  }
}

/**
 * The signed-in user of `req` (with `company`), for pages behind `requireSignedIn`.
 * @throws DomainError 401 when nobody is signed in (a programming error: the route is not behind the guard).
 */
export function signedIn(req: Request): SessionUser {
  const user = req.consoleSession?.user;
  if (!user) throw domainError("invalid_api_key", "Sign in to the console first.");
  return user;
}

/** The client IP for the audit log (`req.ip`, which honours TRUST_PROXY). */
export function clientIp(req: Request): string | null {
  return req.ip ?? null;
}

/**
 * The console's browser security (OWASP Cross-Site Request Forgery and HTTP Headers cheat sheets):
 * - helmet on every response: a Content-Security-Policy with scripts and styles from the console only (no inline
 *   script), `frame-ancestors 'none'`, `X-Content-Type-Options: nosniff`, `Referrer-Policy: same-origin` (with
 *   helmet's default `no-referrer`, Chromium sends `Origin: null` on same-site form posts; see BROWSER.md);
 * - `Cache-Control: no-store` on pages, so a once-shown secret is not kept by the browser (Back does not show it);
 * - an Origin check on state-changing requests: a request whose `Origin` (or `Sec-Fetch-Site`) says it comes from
 *   another site gets 403 before anything runs;
 * - CSRF tokens (csrf-csrf 4, the double-submit cookie pattern with an HMAC bound to the session): every form
 *   carries `_csrf`; a POST without the token of its cookie and session gets 403.
 */
import type { Request, RequestHandler } from "express";
import helmet from "helmet";
import { doubleCsrf, type DoubleCsrfUtilities } from "csrf-csrf";
import { domainError } from "../services/errors";

/** Name of the hidden form field that carries the CSRF token. */
export const CSRF_FIELD = "_csrf";

/** helmet configured for the console (see the file comment). */
export function consoleHelmet(): RequestHandler {
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", "data:"],
        fontSrc: ["'self'"],
        connectSrc: ["'self'"],
        objectSrc: ["'none'"],
        baseUri: ["'none'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
      },
    },
    referrerPolicy: { policy: "same-origin" },
    xFrameOptions: { action: "deny" },
    crossOriginResourcePolicy: { policy: "same-origin" },
  });
}

/** `Cache-Control: no-store` (pages may show a secret once; nothing of the console is cached). */
export const noStore: RequestHandler = (_req, res, next) => {
  res.setHeader("Cache-Control", "no-store");
  next();
};

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** True when a state-changing request comes from this origin (or the browser does not say, e.g. curl). */
export function sameOrigin(req: Request): boolean {
  const origin = req.get("origin");
  if (origin && origin !== "null") return origin === `${req.protocol}://${req.get("host")}`;
  const site = req.get("sec-fetch-site");
  return site === undefined || site === "same-origin" || site === "none";
}

/** 403 for a state-changing request from another origin (the CSRF token is checked after this). */
export const originCheck: RequestHandler = (req, _res, next) => {
  if (SAFE_METHODS.has(req.method) || sameOrigin(req)) return next();
  next(domainError("insufficient_scope", "This form was sent from another site, so it was refused. Nothing was changed."));
};

/** The csrf-csrf utilities for plain http and for https (where the cookie gets `Secure` and the `__Host-` prefix). */
export interface CsrfKit {
  forRequest(req: Request): DoubleCsrfUtilities;
}

/**
 * Builds the CSRF protection. `getSecret` returns the HMAC key (console-sessions.ts `consoleCsrfSecret`, loaded
 * before this runs); the token is bound to the session (its id hash; a session pending its second factor too), or to
 * "" before sign-in.
 */
export function csrfKit(getSecret: () => string): CsrfKit {
  const make = (secure: boolean) =>
    doubleCsrf({
      getSecret,
      getSessionIdentifier: (req) => req.consoleSession?.idHash ?? req.pendingSignIn?.idHash ?? "",
      cookieName: secure ? "__Host-stageline.csrf" : "stageline.csrf",
      cookieOptions: { sameSite: "lax", path: "/", secure, httpOnly: true },
      getCsrfTokenFromRequest: (req) => (req.body as Record<string, unknown> | undefined)?.[CSRF_FIELD] as string | undefined,
      errorConfig: { statusCode: 403, message: "The form expired or was not sent from this console. Reload the page and try again.", code: "EBADCSRFTOKEN" },
    });
  const plain = make(false);
  const secure = make(true);
  return { forRequest: (req) => (req.secure ? secure : plain) };
}

/**
 * The authorization server's answer while the database cannot be reached (CONTRACT "Errors": 503 with `Retry-After`,
 * never a 500; issue 39). Every endpoint under `/oauth` reads or writes `oauth_records`, so an outage reaches the
 * provider as an error from its adapter, which oidc-provider turns into `500 server_error` (its `server_error`
 * event), or as an error from the endpoint limiters' counters before the provider runs. Both become:
 * - `503` with `Retry-After` and `Cache-Control: no-store`;
 * - for an endpoint a program calls (token, revocation, registration, JWKS: anything whose answer is not an HTML
 *   page) an RFC 6749 §5.2-style JSON body `{"error":"temporarily_unavailable","error_description":...}`, the
 *   registered OAuth code for "try again later" (RFC 6749 §4.1.2.1), as the endpoint limiters' 429 uses;
 * - for a browser (the authorization endpoint, an HTML error page) a plain HTML page saying so, never a redirect.
 * Which errors mean "cannot be reached" is decided by db/unreachable.ts (through services/database-outage.ts).
 */
import type { ErrorRequestHandler } from "express";
import { RETRY_AFTER_HEADER } from "@stageline/shared";
import type { Logger } from "pino";
import { OUTAGE_DETAIL, OUTAGE_RETRY_AFTER_SECONDS, outageOf } from "../services/database-outage";

/** The OAuth error code of an outage answer (RFC 6749 §4.1.2.1). */
export const OUTAGE_OAUTH_ERROR = "temporarily_unavailable";

/** The HTML page of an outage answer to a browser. */
const OUTAGE_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Service unavailable</title></head><body><main><h1>Service unavailable</h1><p>${OUTAGE_DETAIL}</p></main></body></html>`;

/** The parts of a Koa context that write its answer (oidc-provider's contexts are Koa's; provider.ts extends it). */
export interface KoaAnswer {
  status: number;
  body: unknown;
  type: string;
  set(name: string, value: string): void;
  remove(name: string): void;
  accepts(...types: string[]): string | false;
}

/** Contexts whose request met an outage inside the provider (marked by `markOutage`). */
const outages = new WeakSet<object>();

/**
 * For oidc-provider's `server_error` event (ctx, err): remembers the request when `err` is an outage, so that
 * `outageMiddleware` rewrites the 500 the provider is writing.
 */
export function markOutage(ctx: object, err: unknown): boolean {
  if (!outageOf(err)) return false;
  outages.add(ctx);
  return true;
}

/** Makes `c`'s answer the outage answer (JSON or HTML as the request accepts). */
function answerOutage(c: KoaAnswer): void {
  c.status = 503;
  c.remove("Location");
  c.set(RETRY_AFTER_HEADER, String(OUTAGE_RETRY_AFTER_SECONDS));
  c.set("Cache-Control", "no-store");
  if (c.accepts("json", "html") === "html") {
    c.type = "html";
    c.body = OUTAGE_PAGE;
  } else {
    c.type = "json";
    c.body = { error: OUTAGE_OAUTH_ERROR, error_description: OUTAGE_DETAIL };
  }
}

/**
 * The provider's outermost middleware (`provider.use`, first): after the endpoint ran, a request marked by
 * `markOutage` gets the outage answer instead of the provider's `server_error`; an outage error that escaped the
 * provider's own handlers (it would be Koa's plain 500) gets it too. Other errors pass unchanged.
 */
export function outageMiddleware(logger: Logger) {
  return async (c: KoaAnswer, next: () => Promise<unknown>): Promise<void> => {
    try {
      await next();
    } catch (err) {
      if (!outageOf(err)) throw err;
      outages.add(c);
    }
    if (!outages.has(c)) return;
    logger.warn("oauth: database unreachable, answered 503");
    answerOutage(c);
  };
}

/**
 * Express error handler of the `/oauth` router: an outage before the provider ran (the endpoint limiters' counters,
 * building the provider, which reads its keys from the database) gets the outage answer; other errors go on to the
 * app's error handler.
 */
export function oauthOutageHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent || !outageOf(err)) return next(err);
    logger.warn({ err, method: req.method }, "oauth: database unreachable, answered 503");
    res.status(503).set(RETRY_AFTER_HEADER, String(OUTAGE_RETRY_AFTER_SECONDS)).set("Cache-Control", "no-store");
    if (req.accepts(["json", "html"]) === "html") res.type("html").send(OUTAGE_PAGE);
    else res.json({ error: OUTAGE_OAUTH_ERROR, error_description: OUTAGE_DETAIL });
  };
}

/**
 * Authentication of `/v1/ext` requests (spec "Authentication"; issue 32, CONTRACT "Connect with OAuth 2.1"):
 * `resolveCredential` looks the presented credential up (an API key as `x-api-key` or `Authorization: Bearer
 * sl_...`, or an OAuth access token as any other `Authorization: Bearer` value; http/bearer-challenge.ts) and stores
 * either `req.auth` or the failure; `requireAuth` (after the rate limiter, so failed requests are counted and carry
 * RateLimit headers) raises the 401/402; `requireScope` raises 403. 401 and 403 carry the `WWW-Authenticate`
 * challenge of http/bearer-challenge.ts.
 */
import type { ErrorRequestHandler, RequestHandler } from "express";
import type { Scope } from "@stageline/shared";
import type { AppContext } from "../context";
import { assertScope, authenticate, scopesNeededBy, type AuthContext } from "../services/api-keys";
import { AccessTokenRejected, authenticateAccessToken } from "../services/oauth-tokens";
import { DomainError, domainError } from "../services/errors";
import { eventActorOfAuth, runAsEventActor } from "../services/event-actors";
import { API_KEY_COUNTER_PREFIX, type DatabaseRateLimitStore } from "./rate-limit";
import { servedOrigins } from "../oauth/served-origins";
import { acceptedResources, challengeFor401, challengeFor403, presentedCredential } from "./bearer-challenge";

/**
 * The 401 of a request with no credential (CONTRACT "Connect with OAuth 2.1": it is told it may send an API key or an
 * OAuth access token).
 */
export const NO_CREDENTIAL_DETAIL =
  "Send an API key (x-api-key header, or Authorization: Bearer) or an OAuth access token (Authorization: Bearer).";

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      auth?: AuthContext;
      authError?: DomainError;
    }
  }
}

/**
 * Resolves the credential; never fails the request itself (except on database errors). The lookup also counts the
 * request against the credential's rate-limit window (the API key's, or the access token's grant's) in the same
 * statement and leaves the ticket for the limiter, which must be the next middleware (app.ts); a request whose
 * credential fails is counted by the limiter per client IP instead.
 */
export function resolveCredential(ctx: Pick<AppContext, "prisma" | "config" | "publicOrigin">, limiter: DatabaseRateLimitStore): RequestHandler {
  return async (req, _res, next) => {
    try {
      const windowStart = limiter.windowStart();
      const presented = presentedCredential(req);
      if (presented.kind === "none") throw domainError("invalid_api_key", NO_CREDENTIAL_DETAIL);
      const { auth, hits } =
        presented.kind === "token"
          ? await authenticateAccessToken(ctx.prisma, presented.value, acceptedResources(req, servedOrigins(ctx)), new Date(), windowStart)
          : await authenticate(ctx.prisma, presented.value, new Date(), { keyPrefix: API_KEY_COUNTER_PREFIX, windowStart });
      req.auth = auth;
      if (hits != null) req.rateLimitTicket = limiter.precounted(auth.counterKey, hits, windowStart);
    } catch (err) {
      if (err instanceof DomainError) req.authError = err;
      else return next(err);
    }
    next();
  };
}

/**
 * Fails with the stored 401/402 problem when the credential did not authenticate; a 401 gets its challenge (a refused
 * access token's says why). An authenticated request runs on as its credential's actor (services/event-actors.ts): its
 * events record who wrote them.
 */
export function requireAuth(ctx: Pick<AppContext, "config" | "publicOrigin">): RequestHandler {
  return (req, res, next) => {
    if (req.auth) return runAsEventActor(eventActorOfAuth(req.auth), next);
    const err = req.authError ?? domainError("invalid_api_key", NO_CREDENTIAL_DETAIL);
    if (err.status === 401) {
      const challenge = challengeFor401(req, servedOrigins(ctx), err instanceof AccessTokenRejected ? err.description : undefined);
      if (challenge) res.setHeader("WWW-Authenticate", challenge);
    }
    next(err);
  };
}

/** Requires one of the scopes (403 `insufficient_scope` otherwise). */
export function requireScope(...anyOf: Scope[]): RequestHandler {
  return (req, _res, next) => {
    assertScope(req.auth!, anyOf);
    next();
  };
}

/**
 * Error middleware: adds the `error="insufficient_scope"` challenge to a 403 of `assertScope` when the request
 * carried an access token (http/bearer-challenge.ts), then passes the error on to the problem renderer.
 */
export function challengeInsufficientScope(ctx: Pick<AppContext, "config" | "publicOrigin">): ErrorRequestHandler {
  return (err, req, res, next) => {
    const needed = scopesNeededBy(err);
    const challenge = needed && !res.headersSent ? challengeFor403(req, servedOrigins(ctx), needed) : null;
    if (challenge) res.setHeader("WWW-Authenticate", challenge);
    next(err);
  };
}

/** The authenticated context of a request that passed `requireAuth`. */
export function authOf(req: Express.Request): AuthContext {
  if (!req.auth) throw new Error("authOf() called on an unauthenticated request");
  return req.auth;
}

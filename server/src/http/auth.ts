/**
 * API-key authentication (spec "Authentication"): `resolveApiKey` looks the `x-api-key` header up and stores either
 * `req.auth` or the failure; `requireAuth` (after the rate limiter, so failed requests are counted and carry
 * RateLimit headers) raises the 401/402; `requireScope` raises 403.
 */
import type { RequestHandler } from "express";
import type { Scope } from "@stageline/shared";
import type { PrismaClient } from "../generated/prisma/client";
import { assertScope, authenticate, type AuthContext } from "../services/api-keys";
import { DomainError, domainError } from "../services/errors";
import { API_KEY_COUNTER_PREFIX, type DatabaseRateLimitStore } from "./rate-limit";

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
 * Resolves the key; never fails the request itself (except on database errors). The lookup also counts the request
 * against the key's rate-limit window in the same statement and leaves the ticket for the limiter, which must be
 * the next middleware (app.ts); a request whose key fails is counted by the limiter per client IP instead.
 */
export function resolveApiKey(prisma: PrismaClient, limiter: DatabaseRateLimitStore): RequestHandler {
  return async (req, _res, next) => {
    try {
      const windowStart = limiter.windowStart();
      const { auth, hits } = await authenticate(prisma, req.header("x-api-key"), new Date(), {
        keyPrefix: API_KEY_COUNTER_PREFIX,
        windowStart,
      });
      req.auth = auth;
      if (hits != null) req.rateLimitTicket = limiter.precounted(API_KEY_COUNTER_PREFIX + auth.keyId, hits, windowStart);
    } catch (err) {
      if (err instanceof DomainError) req.authError = err;
      else return next(err);
    }
    next();
  };
}

/** Fails with the stored 401/402 problem when the key did not authenticate. */
export const requireAuth: RequestHandler = (req, _res, next) => {
  if (req.auth) return next();
  next(req.authError ?? domainError("invalid_api_key", "Send your API key in the x-api-key header."));
};

/** Requires one of the scopes (403 `insufficient_scope` otherwise). */
export function requireScope(...anyOf: Scope[]): RequestHandler {
  return (req, _res, next) => {
    assertScope(req.auth!, anyOf);
    next();
  };
}

/** The authenticated context of a request that passed `requireAuth`. */
export function authOf(req: Express.Request): AuthContext {
  if (!req.auth) throw new Error("authOf() called on an unauthenticated request");
  return req.auth;
}

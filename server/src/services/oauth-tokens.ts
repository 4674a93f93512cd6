/**
 * OAuth access tokens at the resource side (issue 32, CONTRACT "Connect with OAuth 2.1"; RFC 6750 bearer tokens,
 * RFC 8707 resource indicators): verifies a token a `/v1/ext` request carries against the authorization server's
 * records (docs/oauth-storage.md), without the authorization server's code, and builds the request's AuthContext.
 */
import crypto from "node:crypto";
import { SCOPES, type Scope } from "@stageline/shared";
import type { PrismaClient } from "../generated/prisma/client";
import * as tokens from "../db/oauth-tokens";
import type { Authenticated } from "./api-keys";
import { domainError, type DomainError } from "./errors";

/** The counter key prefix of an OAuth grant's rate limit (`grant:<grant id>`, CONTRACT: 60 per 60 s per grant). */
export const GRANT_COUNTER_PREFIX = "grant:";

/** The OAuth scope that is not an API scope (it asks for a refresh token). */
const OFFLINE_ACCESS = "offline_access";

const LAST_USED_INTERVAL_MS = 60_000;
/** Grants whose `last_used_at` this process is writing right now (a burst of requests writes it once). */
const touching = new Set<string>();

/** The record id of an access token: base64url(sha256(token)) (docs/oauth-storage.md "Columns"). */
export function accessTokenRecordId(token: string): string {
  return crypto.createHash("sha256").update(token).digest("base64url");
}

/**
 * 401 for an access token that does not authenticate (unknown, expired, revoked with its grant, its user gone from its
 * company, or bound to the other resource). The problem code stays the contract's one 401 code, `invalid_api_key`; the `WWW-Authenticate`
 * header says `error="invalid_token"` (RFC 6750 §3.1; http/bearer-challenge.ts).
 */
export function invalidAccessToken(): DomainError {
  return domainError("invalid_api_key", "The access token is invalid or expired. Refresh it, or connect the app again.");
}

/**
 * The API scopes of a token's space-separated `scope`: `offline_access` and anything unknown left out, in the
 * contract's order.
 */
export function apiScopesOf(scope: string): Scope[] {
  const granted = new Set(scope.split(" ").filter((s) => s && s !== OFFLINE_ACCESS));
  return SCOPES.filter((s) => granted.has(s));
}

/**
 * Verifies an access token for a request to `resource` (the absolute resource identifier of the requested path,
 * oauth/resources.ts) and counts the request against its grant's rate limit in the same statement
 * (db/oauth-tokens.ts `findAccessTokenAndCountHit`): valid when its `AccessToken` record exists, is unexpired at
 * `now`, its `aud` is `resource`, its `Grant` record exists and the grant's user is still in the token's company
 * (docs/oauth-storage.md). The grant's `last_used_at` is written at most once a minute.
 * @returns the AuthContext (credential `oauth`, the granted API scopes, the record's company) and the hits counted.
 * @throws DomainError 401 `invalid_api_key` (see `invalidAccessToken`); 402 `subscription_inactive`.
 */
export async function authenticateAccessToken(
  prisma: PrismaClient,
  token: string,
  resource: string,
  now: Date,
  windowStart: Date,
): Promise<Authenticated> {
  const found = await tokens.findAccessTokenAndCountHit(prisma, accessTokenRecordId(token), {
    keyPrefix: GRANT_COUNTER_PREFIX,
    windowStart,
    now,
    resource,
  });
  if (!found || found.token.audience !== resource) throw invalidAccessToken();
  const record = found.token;
  if (!record.company.subscriptionActive) {
    throw domainError("subscription_inactive", "API access requires an active subscription. Renew it in Company Settings.");
  }
  await touchGrant(prisma, record, now);
  const appName = record.clientName?.trim() || record.clientId;
  return {
    auth: {
      keyId: record.grantId,
      keyName: appName,
      scopes: apiScopesOf(record.scope),
      expiresAt: record.expiresAt,
      company: { id: record.company.id, name: record.company.name },
      credential: { kind: "oauth", grantId: record.grantId, clientId: record.clientId, appName, userId: record.accountId },
      counterKey: GRANT_COUNTER_PREFIX + record.grantId,
    },
    hits: found.hits,
  };
}

/**
 * Writes the grant's `last_used_at` when the stored one (read in the same statement as the token) is a minute old or
 * more: no write on most requests, at most about one per minute per grant across processes (the UPDATE checks the
 * age again, db/oauth-tokens.ts `touchGrantLastUsed`), one at a time per grant in this process.
 */
async function touchGrant(prisma: PrismaClient, record: tokens.AccessTokenRecord, now: Date): Promise<void> {
  const stored = record.grantLastUsedAt?.getTime() ?? 0;
  if (now.getTime() - stored < LAST_USED_INTERVAL_MS || touching.has(record.grantId)) return;
  touching.add(record.grantId);
  try {
    await tokens.touchGrantLastUsed(prisma, record.grantId, now, LAST_USED_INTERVAL_MS);
  } finally {
    touching.delete(record.grantId);
  }
}

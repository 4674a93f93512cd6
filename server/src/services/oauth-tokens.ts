/**
 * OAuth access tokens at the resource side (issue 32, CONTRACT "Connect with OAuth 2.1"; RFC 6750 bearer tokens,
 * RFC 8707 resource indicators): verifies a token a `/v1/ext` request carries against the authorization server's
 * records (docs/oauth-storage.md), without the authorization server's code, and builds the request's AuthContext.
 */
import crypto from "node:crypto";
import { SCOPES, type Scope, type TokenError } from "@stageline/shared";
import type { PrismaClient } from "../generated/prisma/client";
import * as tokens from "../db/oauth-tokens";
import type { Authenticated } from "./api-keys";
import { DomainError, domainError } from "./errors";

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
 * 401 for an access token that does not authenticate (CONTRACT "Connect with OAuth 2.1": a token used on the other
 * resource, or expired, says which; never "invalid API key"; issue 39). The problem code stays `invalid_api_key`, the
 * contract's one code for bad credentials (CONTRACT "Errors" lists no other 401 code, and clients switch on it); the
 * body's `token_error` says why (`TOKEN_ERRORS`), its `detail` says it in words, and `description` is the
 * `error_description` of the `WWW-Authenticate: Bearer error="invalid_token"` challenge (RFC 6750 §3.1; built by
 * http/bearer-challenge.ts).
 */
export class AccessTokenRejected extends DomainError {
  constructor(
    readonly reason: TokenError,
    /** One sentence for `error_description` (printable ASCII, no double quote or backslash: RFC 6750 §3). */
    readonly description: string,
    detail: string,
  ) {
    super("invalid_api_key", detail, { token_error: reason });
    this.name = "AccessTokenRejected";
  }
}

/**
 * Why a token was refused, from what its record says (db/oauth-tokens.ts `findAccessTokenState`), in this order: no
 * record or its grant gone (revoked, user removed) is `unknown`; an `aud` that is not one of `resources` is
 * `wrong_resource` (refreshing would not help, so it comes before expiry); past `expiresAt` is `expired`.
 * @param resources the requested path's resource identifiers, the one at the origin the request addressed first.
 */
export function tokenRejection(state: tokens.AccessTokenState | null, resources: readonly string[], now: Date): AccessTokenRejected {
  const here = resources[0]!;
  if (state && state.grantLive && state.audience !== null && !resources.includes(state.audience)) {
    const said = `The access token was issued for resource ${state.audience}, not for ${here}.`;
    return new AccessTokenRejected(
      "wrong_resource",
      said,
      `${said} Use it there, or get a token for this resource (authorization request with resource=${here}, RFC 8707).`,
    );
  }
  if (state && state.grantLive && state.expiresAt.getTime() <= now.getTime()) {
    const at = state.expiresAt.toISOString();
    return new AccessTokenRejected("expired", `The access token expired at ${at}.`, `The access token expired at ${at}. Refresh it with the refresh token, or connect the app again.`);
  }
  return new AccessTokenRejected(
    "unknown",
    "The access token is unknown or was revoked.",
    "The access token is unknown: it was revoked, its user left the company, it expired some time ago, or it was never issued. Refresh it, or connect the app again.",
  );
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
 * Verifies an access token for a request to `resources` (the identifiers of the requested path's resource,
 * oauth/served-origins.ts `resourceIdentifiers`: one, or in development its `localhost` and `127.0.0.1` names, the
 * addressed one first) and counts the request against its grant's rate limit in the same statement
 * (db/oauth-tokens.ts `findAccessTokenAndCountHit`): valid when its `AccessToken` record exists, is unexpired at
 * `now`, its `aud` is one of `resources`, its `Grant` record exists and the grant's user is still in the token's
 * company (docs/oauth-storage.md). The grant's `last_used_at` is written at most once a minute. A refused token costs
 * a second read (`findAccessTokenState`) to say why.
 * @returns the AuthContext (credential `oauth`, the granted API scopes, the record's company) and the hits counted.
 * @throws AccessTokenRejected 401 `invalid_api_key` with `token_error` (see `tokenRejection`); DomainError 402
 * `subscription_inactive`.
 */
export async function authenticateAccessToken(
  prisma: PrismaClient,
  token: string,
  resources: readonly string[],
  now: Date,
  windowStart: Date,
): Promise<Authenticated> {
  const found = await tokens.findAccessTokenAndCountHit(prisma, accessTokenRecordId(token), {
    keyPrefix: GRANT_COUNTER_PREFIX,
    windowStart,
    now,
    resources,
  });
  if (!found || found.token.audience === null || !resources.includes(found.token.audience)) {
    const state = found ? { audience: found.token.audience, expiresAt: found.token.expiresAt, grantLive: true } : await tokens.findAccessTokenState(prisma, accessTokenRecordId(token), now);
    throw tokenRejection(state, resources, now);
  }
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

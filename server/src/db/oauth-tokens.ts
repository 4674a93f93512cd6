/**
 * Data access for the resource side of OAuth (issue 32): reading an access token's `AccessToken` and `Grant` records
 * of table `oauth_records` directly, in the format of docs/oauth-storage.md, without the authorization server's code.
 */
import type { PrismaClient } from "../generated/prisma/client";
import { COUNT_HIT_ON_CONFLICT } from "./rate-limit";
import { query, queryOne } from "./sql";

/** An access token as the resource side needs it, with its grant, company and client. */
export interface AccessTokenRecord {
  /** The record id: base64url(sha256(token)). */
  id: string;
  /** `payload.aud`: the resource identifier the token is bound to (null when absent or not a string). */
  audience: string | null;
  /** `payload.scope` (space-separated, may include `offline_access`). */
  scope: string;
  /** `payload.accountId`: the user who granted it. */
  accountId: string | null;
  /** `payload.grantId`. */
  grantId: string;
  /** `payload.clientId`. */
  clientId: string;
  /** The `Client` record's `payload.client_name`, when the client record exists and names itself. */
  clientName: string | null;
  expiresAt: Date;
  /** The grant's `last_used_at`. */
  grantLastUsedAt: Date | null;
  company: { id: string; name: string; subscriptionActive: boolean };
}

interface Row {
  id: string;
  aud: string | null;
  scope: string | null;
  account_id: string | null;
  grant_id: string;
  client_id: string;
  client_name: string | null;
  expires_at: Date;
  grant_last_used_at: Date | null;
  company_id: string;
  company_name: string;
  subscription_active: boolean;
  hits: number | null;
}

/** Where `findAccessTokenAndCountHit` counts the request (as db/api-keys.ts `HitToCount`, per grant). */
export interface GrantHitToCount {
  /** The counter key is `keyPrefix` + the grant's id (`grant:` + id, see http/rate-limit.ts). */
  keyPrefix: string;
  /** Start of the current fixed window. */
  windowStart: Date;
  /** The instant expiry is checked against (the app's clock). */
  now: Date;
  /**
   * The identifiers of the requested path's resource (oauth/served-origins.ts `resourceIdentifiers`: one, or two in
   * development, `localhost` and `127.0.0.1`): the hit is counted only when `aud` is one of them.
   */
  resources: readonly string[];
}

/**
 * Runs on every request that carries an access token: finds the `AccessToken` record whose id is `tokenHash`
 * (base64url SHA-256 of the token), unexpired at `hit.now`, whose `Grant` record (`payload.grantId`) exists and is
 * unexpired, whose user (the grant's `payload.accountId`) still exists in the token's company, with its company and
 * its `Client` record's name (docs/oauth-storage.md "Rules every reader follows"),
 * AND, in the same statement, counts one rate-limit hit for its grant (the upsert of db/rate-limit.ts
 * `incrementWindow`, as a data-modifying CTE) when the token is usable for `hit.resources` and the company's
 * subscription is active: one round trip for authentication and the rate limit, as for API keys.
 * The user condition is defence in depth: removing a user or moving them out of the company revokes their grants
 * (db/oauth-grants.ts `deleteUserGrantRecords`), but should that cleanup ever be missed, their tokens still stop
 * working (one primary-key lookup of `users` in the same statement).
 * @returns the record and `hits` (this window's hits so far, this one included; null when none was counted), or null
 * when there is no such valid token (unknown, expired, its grant gone, or its user gone from the company).
 */
export async function findAccessTokenAndCountHit(
  prisma: PrismaClient,
  tokenHash: string,
  hit: GrantHitToCount,
): Promise<{ token: AccessTokenRecord; hits: number | null } | null> {
  const row = await queryOne<Row>(
    prisma,
    `WITH t AS (
       SELECT t.id, t.payload->>'aud' AS aud, t.payload->>'scope' AS scope, t.payload->>'accountId' AS account_id,
              g.id AS grant_id, t.payload->>'clientId' AS client_id, cl.payload->>'client_name' AS client_name,
              t.expires_at, g.last_used_at AS grant_last_used_at,
              c.id AS company_id, c.name AS company_name, c.subscription_active
       FROM oauth_records t
       JOIN oauth_records g ON g.model = 'Grant' AND g.id = t.payload->>'grantId'
                           AND (g.expires_at IS NULL OR g.expires_at > $4::timestamptz)
       JOIN companies c ON c.id = t.company_id
       -- The grant's user, still in the token's company (defence in depth: see the docstring).
       JOIN users u ON u.id = g.payload->>'accountId' AND u.company_id = t.company_id
       LEFT JOIN oauth_records cl ON cl.model = 'Client' AND cl.id = t.payload->>'clientId'
                                 AND (cl.expires_at IS NULL OR cl.expires_at > $4::timestamptz)
       WHERE t.model = 'AccessToken' AND t.id = $1 AND t.expires_at > $4::timestamptz
     ), hit AS (
       INSERT INTO rate_limit_windows (key, window_start, hits)
       SELECT $2 || t.grant_id, $3::timestamptz, 1 FROM t WHERE t.aud IN ($5, $6) AND t.subscription_active
       ${COUNT_HIT_ON_CONFLICT}
     )
     SELECT t.*, (SELECT hits FROM hit) AS hits FROM t`,
    [tokenHash, hit.keyPrefix, hit.windowStart, hit.now, hit.resources[0], hit.resources[1] ?? hit.resources[0]],
    { name: "find-access-token-and-count-hit" },
  );
  if (!row) return null;
  return {
    token: {
      id: row.id,
      audience: row.aud,
      scope: row.scope ?? "",
      accountId: row.account_id,
      grantId: row.grant_id,
      clientId: row.client_id,
      clientName: row.client_name,
      expiresAt: row.expires_at,
      grantLastUsedAt: row.grant_last_used_at,
      company: { id: row.company_id, name: row.company_name, subscriptionActive: row.subscription_active },
    },
    hits: row.hits == null ? null : Number(row.hits),
  };
}

/** Why `findAccessTokenAndCountHit` found no valid token: what the `AccessToken` record itself says. */
export interface AccessTokenState {
  /** `payload.aud` (null when absent or not a string). */
  audience: string | null;
  expiresAt: Date;
  /** Whether its `Grant` record exists, is unexpired at the instant given, and its user is still in the token's company. */
  grantLive: boolean;
}

/**
 * The `AccessToken` record whose id is `tokenHash`, expired or not, with whether its grant still holds at `now`
 * (the rules of `findAccessTokenAndCountHit`), so a refused token can be told why (issue 39: expired, or bound to the
 * other resource). Only called after `findAccessTokenAndCountHit` found nothing; reads, never writes.
 * @returns null when there is no such record (never issued, revoked with its grant, or purged after expiry).
 */
export async function findAccessTokenState(prisma: PrismaClient, tokenHash: string, now: Date): Promise<AccessTokenState | null> {
  const row = await queryOne<{ aud: string | null; expires_at: Date; grant_live: boolean }>(
    prisma,
    `SELECT t.payload->>'aud' AS aud, t.expires_at,
            EXISTS (SELECT 1 FROM oauth_records g JOIN users u ON u.id = g.payload->>'accountId' AND u.company_id = t.company_id
                    WHERE g.model = 'Grant' AND g.id = t.payload->>'grantId'
                      AND (g.expires_at IS NULL OR g.expires_at > $2::timestamptz)) AS grant_live
     FROM oauth_records t WHERE t.model = 'AccessToken' AND t.id = $1`,
    [tokenHash, now],
  );
  return row ? { audience: row.aud, expiresAt: row.expires_at, grantLive: row.grant_live } : null;
}

/**
 * Sets the `Grant` record's `last_used_at = now` unless it was set within the last `minIntervalMs` (at most one write
 * per grant per minute, across processes).
 */
export async function touchGrantLastUsed(prisma: PrismaClient, grantId: string, now: Date, minIntervalMs: number): Promise<void> {
  await query(
    prisma,
    `UPDATE oauth_records SET last_used_at = $2::timestamptz
     WHERE model = 'Grant' AND id = $1 AND (last_used_at IS NULL OR last_used_at < $3::timestamptz)`,
    [grantId, now, new Date(now.getTime() - minIntervalMs)],
  );
}

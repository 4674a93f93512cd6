/** Data access for API keys (table `api_keys`). */
import type { Prisma, PrismaClient } from "../generated/prisma/client";
import { COUNT_HIT_ON_CONFLICT } from "./rate-limit";
import { queryOne } from "./sql";

/** A client or an interactive transaction. */
type Db = PrismaClient | Prisma.TransactionClient;

/** An API key row with the fields of its company that authentication needs. */
export interface KeyWithCompany {
  id: string;
  companyId: string;
  name: string;
  prefix: string;
  keyHash: string;
  scopes: string[];
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  createdAt: Date;
  company: { id: string; name: string; subscriptionActive: boolean };
}

interface KeyWithCompanyRow {
  id: string;
  company_id: string;
  name: string;
  prefix: string;
  key_hash: string;
  scopes: string[];
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  created_at: Date;
  company_name: string;
  subscription_active: boolean;
}

const KEY_COLUMNS = `k.id, k.company_id, k.name, k.prefix, k.key_hash, k.scopes, k.expires_at, k.revoked_at, k.last_used_at,
       k.created_at, c.name AS company_name, c.subscription_active`;

function toKeyWithCompany(row: KeyWithCompanyRow): KeyWithCompany {
  return {
    id: row.id,
    companyId: row.company_id,
    name: row.name,
    prefix: row.prefix,
    keyHash: row.key_hash,
    scopes: row.scopes,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
    createdAt: row.created_at,
    company: { id: row.company_id, name: row.company_name, subscriptionActive: row.subscription_active },
  };
}

/** Where `findKeyAndCountHit` counts the request: the rate-limit counter key and its fixed window. */
export interface HitToCount {
  /** The counter key is `keyPrefix` + the API key's id (e.g. `key:` + id, see http/rate-limit.ts). */
  keyPrefix: string;
  /** Start of the current fixed window. */
  windowStart: Date;
  /** The app's clock, for the expiry check (the same instant services/api-keys.ts `authenticate` checks with). */
  now: Date;
}

/**
 * Runs on every API request: looks up the key whose SHA-256 hash is `keyHash` with its company (unique `key_hash`
 * index joined to `companies`) AND, in the same statement, counts one rate-limit hit for it (the upsert of
 * db/rate-limit.ts `incrementWindow`, as a data-modifying CTE), so authentication and the rate limit cost one round
 * trip instead of two. The hit is counted only for a usable key: not revoked, not expired at
 * `hit.now`, company subscription active (any other request is counted per client IP by the rate limiter).
 * @returns the key with its company and `hits` (the hits in the window so far, this one included; null when no hit
 * was counted), or null when the hash is unknown.
 */
export async function findKeyAndCountHit(
  prisma: PrismaClient,
  keyHash: string,
  hit: HitToCount,
): Promise<{ key: KeyWithCompany; hits: number | null } | null> {
  const row = await queryOne<KeyWithCompanyRow & { hits: number | null }>(
    prisma,
    `WITH k AS (
       SELECT ${KEY_COLUMNS} FROM api_keys k JOIN companies c ON c.id = k.company_id WHERE k.key_hash = $1
     ), hit AS (
       INSERT INTO rate_limit_windows (key, window_start, hits)
       SELECT $2 || k.id, $3::timestamptz, 1 FROM k
       WHERE k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > $4::timestamptz) AND k.subscription_active
       ${COUNT_HIT_ON_CONFLICT}
     )
     SELECT k.*, (SELECT hits FROM hit) AS hits FROM k`,
    [keyHash, hit.keyPrefix, hit.windowStart, hit.now],
    { name: "find-key-and-count-hit" },
  );
  if (!row) return null;
  return { key: toKeyWithCompany(row), hits: row.hits == null ? null : Number(row.hits) };
}

/** Stores a new key. `keyHash` is the SHA-256 hex of the full secret; the secret itself is never stored. */
export function insertKey(
  prisma: Db,
  data: { companyId: string; name: string; prefix: string; keyHash: string; scopes: string[]; expiresAt: Date | null },
) {
  return prisma.apiKey.create({ data });
}

/** Sets `last_used_at = now` unless it was set within the last `minIntervalMs` (one write per key per minute). */
export function touchKeyLastUsed(prisma: PrismaClient, id: string, now: Date, minIntervalMs: number) {
  return prisma.apiKey.updateMany({
    where: { id, OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: new Date(now.getTime() - minIntervalMs) } }] },
    data: { lastUsedAt: now },
  });
}

/** Every key of a company, newest first. */
export function listKeys(prisma: PrismaClient, companyId: string) {
  return prisma.apiKey.findMany({ where: { companyId }, orderBy: [{ createdAt: "desc" }, { id: "desc" }] });
}

/** Renames a key; returns null when it does not exist. */
export async function renameKey(prisma: PrismaClient, id: string, name: string) {
  const { count } = await prisma.apiKey.updateMany({ where: { id }, data: { name } });
  return count ? prisma.apiKey.findUnique({ where: { id } }) : null;
}

/** Revokes a key (idempotent: the first revocation time is kept); returns null when it does not exist. */
export async function revokeKey(prisma: PrismaClient, id: string, now: Date) {
  await prisma.apiKey.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: now } });
  return prisma.apiKey.findUnique({ where: { id } });
}

/** The key `id` (any company), or null. */
export function findKey(prisma: Db, id: string) {
  return prisma.apiKey.findUnique({ where: { id } });
}

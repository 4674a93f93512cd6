/** Data access for API keys (table `api_keys`). */
import type { Prisma, PrismaClient } from "../generated/prisma/client";
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

/**
 * The key whose SHA-256 hash is `keyHash`, with its company; null when unknown. Runs on every API request, so it is
 * one raw statement (db/sql.ts) on the unique `key_hash` index joined to `companies`, not a Prisma include.
 */
export async function findKeyByHash(prisma: PrismaClient, keyHash: string): Promise<KeyWithCompany | null> {
  const row = await queryOne<KeyWithCompanyRow>(
    prisma,
    `SELECT k.id, k.company_id, k.name, k.prefix, k.key_hash, k.scopes, k.expires_at, k.revoked_at, k.last_used_at,
       k.created_at, c.name AS company_name, c.subscription_active
     FROM api_keys k JOIN companies c ON c.id = k.company_id
     WHERE k.key_hash = $1`,
    [keyHash],
  );
  if (!row) return null;
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

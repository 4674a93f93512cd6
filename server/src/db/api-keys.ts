/** Data access for API keys (table `api_keys`). */
import type { Prisma, PrismaClient } from "../generated/prisma/client";

/** A client or an interactive transaction. */
type Db = PrismaClient | Prisma.TransactionClient;

export type KeyWithCompany = NonNullable<Awaited<ReturnType<typeof findKeyByHash>>>;

/** The key whose SHA-256 hash is `keyHash`, with its company; null when unknown. */
export function findKeyByHash(prisma: PrismaClient, keyHash: string) {
  return prisma.apiKey.findUnique({
    where: { keyHash },
    include: { company: { select: { id: true, name: true, subscriptionActive: true } } },
  });
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

/**
 * API keys (spec "Authentication"): creation with a once-shown secret, verification, rename, revoke.
 * Key format: `sl_<prefix>_<secret>`; `prefix` is 8 visible characters, `secret` 32 random bytes (base64url).
 * Only the SHA-256 hash of the whole key is stored: keys are high-entropy, so a fast hash is sufficient.
 */
import crypto from "node:crypto";
import { SCOPES, type Scope } from "@stageline/shared";
import type { Prisma, PrismaClient } from "../generated/prisma/client";
import * as keys from "../db/api-keys";
import { domainError } from "./errors";

export interface AuthContext {
  keyId: string;
  keyName: string;
  scopes: Scope[];
  expiresAt: Date | null;
  company: { id: string; name: string };
}

/** SHA-256 hex of a raw API key. */
export function hashApiKey(rawKey: string): string {
  return crypto.createHash("sha256").update(rawKey).digest("hex");
}

/** Generates a new raw key and its visible prefix. */
export function generateApiKey(): { key: string; prefix: string } {
  const prefix = crypto.randomBytes(6).toString("base64url").replace(/[-_]/g, "x").slice(0, 8).toLowerCase();
  const secret = crypto.randomBytes(32).toString("base64url");
  return { key: `sl_${prefix}_${secret}`, prefix: `sl_${prefix}` };
}

/**
 * Creates a key for a company. New keys get all scopes by default (spec "Authentication" 4).
 * @returns the stored row and the raw key, which is shown once and cannot be retrieved afterwards.
 */
export async function createApiKey(
  prisma: PrismaClient | Prisma.TransactionClient,
  input: { companyId: string; name: string; scopes?: Scope[]; expiresAt?: Date | null },
) {
  const { key, prefix } = generateApiKey();
  const row = await keys.insertKey(prisma, {
    companyId: input.companyId,
    name: input.name,
    prefix,
    keyHash: hashApiKey(key),
    scopes: [...new Set(input.scopes?.length ? input.scopes : SCOPES)],
    expiresAt: input.expiresAt ?? null,
  });
  return { row, key };
}

const LAST_USED_INTERVAL_MS = 60_000;
const lastTouched = new Map<string, number>();

/** The outcome of `authenticate`: the key's context and the rate-limit hits counted with it. */
export interface Authenticated {
  auth: AuthContext;
  /** Hits in the current window, this request included (null when the key was not counted: it failed). */
  hits: number | null;
}

/**
 * Verifies a raw `x-api-key` value (spec "Authentication", CONTRACT.md "Errors"). The same database statement also
 * counts the request against the key's rate-limit window `countHit` (db/api-keys.ts `findKeyAndCountHit`), so a
 * request costs one round trip for both; a key that fails verification is not counted.
 * @param now the instant expiry is checked against.
 * @throws DomainError 401 `invalid_api_key` (missing, unknown, revoked, expired); 402 `subscription_inactive`.
 */
export async function authenticate(
  prisma: PrismaClient,
  rawKey: string | undefined,
  now: Date,
  countHit: Omit<keys.HitToCount, "now">,
): Promise<Authenticated> {
  if (!rawKey) throw domainError("invalid_api_key", "Send your API key in the x-api-key header.");
  const keyHash = hashApiKey(rawKey.trim());
  const found = await keys.findKeyAndCountHit(prisma, keyHash, { ...countHit, now });
  if (!found) throw domainError("invalid_api_key", "The API key is not valid. Check that it was copied completely.");
  const row = found.key;
  if (row.revokedAt) throw domainError("invalid_api_key", `The API key "${row.name}" has been revoked. Create a new key in Company Settings.`);
  if (row.expiresAt && row.expiresAt <= now) {
    throw domainError("invalid_api_key", `The API key "${row.name}" expired at ${row.expiresAt.toISOString()}. Create a new key in Company Settings.`);
  }
  if (!row.company.subscriptionActive) {
    throw domainError("subscription_inactive", "API access requires an active subscription. Renew it in Company Settings.");
  }
  const last = lastTouched.get(row.id) ?? 0;
  if (now.getTime() - last >= LAST_USED_INTERVAL_MS) {
    lastTouched.set(row.id, now.getTime());
    await keys.touchKeyLastUsed(prisma, row.id, now, LAST_USED_INTERVAL_MS);
  }
  return {
    auth: {
      keyId: row.id,
      keyName: row.name,
      scopes: row.scopes.filter((s): s is Scope => (SCOPES as readonly string[]).includes(s)),
      expiresAt: row.expiresAt,
      company: { id: row.company.id, name: row.company.name },
    },
    hits: found.hits,
  };
}

/**
 * Checks that the key holds at least one of `anyOf`.
 * @throws DomainError 403 `insufficient_scope`, naming the scope(s) in `detail`.
 */
export function assertScope(auth: AuthContext, anyOf: Scope[]): void {
  if (anyOf.some((s) => auth.scopes.includes(s))) return;
  const needed = anyOf.join(" or ");
  throw domainError("insufficient_scope", `This API key lacks the ${needed} scope. Create a key with ${needed} in Company Settings.`);
}

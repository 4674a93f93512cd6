/**
 * API keys (spec "Authentication"): creation with a once-shown secret, verification, rename, revoke.
 * Key format: `sl_<prefix>_<secret>`; `prefix` is 8 visible characters, `secret` 32 random bytes (base64url).
 * Only the SHA-256 hash of the whole key is stored: keys are high-entropy, so a fast hash is sufficient.
 */
import crypto from "node:crypto";
import { KeyCreateSchema, KeyRenameSchema, SCOPES, parseInput, type KeyCreated, type KeySummary, type Scope } from "@stageline/shared";
import type { ApiKey, Prisma, PrismaClient } from "../generated/prisma/client";
import * as keys from "../db/api-keys";
import { requireCompany } from "./companies";
import { recordAudit, type AuditAction, type AuditActor } from "./audit-log";
import { domainError, notFound, type DomainError } from "./errors";

/**
 * Which credential authenticated a request: an API key, or an OAuth access token (issue 32, CONTRACT "Connect with
 * OAuth 2.1") with its grant, client and app name (the `Client` record's `client_name`, else the client id).
 */
export type Credential =
  | { kind: "key" }
  | { kind: "oauth"; grantId: string; clientId: string; appName: string; userId: string | null };

/** The authenticated caller of a `/v1/ext` request (REST or MCP). */
export interface AuthContext {
  /**
   * The credential's id: the API key's id, or for an access token its grant's id. Tasks and notes record it as
   * `created_by`; `/me` shows it as `key.id`.
   */
  keyId: string;
  /** The API key's name, or the OAuth app's name. */
  keyName: string;
  /** The API scopes: the key's, or the token's granted scopes without `offline_access`. */
  scopes: Scope[];
  /** When the key or the access token expires (null: a key without expiry). */
  expiresAt: Date | null;
  company: { id: string; name: string };
  credential: Credential;
  /** The credential's rate-limit counter key (http/rate-limit.ts): `key:<key id>` or `grant:<grant id>`. */
  counterKey: string;
}

/** The counter key prefix of an API key's rate limit (`key:<api key id>`). */
export const API_KEY_COUNTER_PREFIX = "key:";

/** Who a request's credential is, for the audit log: the API key, or the OAuth app (by its grant). */
export function actorOfAuth(auth: AuthContext): AuditActor {
  return auth.credential.kind === "oauth"
    ? { type: "oauth_app", id: auth.keyId, name: auth.keyName }
    : { type: "api_key", id: auth.keyId, name: auth.keyName };
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
 * 401 `invalid_api_key` for a key that does not exist (spec "Authentication", CONTRACT "Errors"): never issued,
 * deleted, or gone with its company (a write that finds its company deleted after the key was checked answers the
 * same as the next request with that key will).
 */
export function unknownApiKey(): DomainError {
  return domainError("invalid_api_key", "The API key is not valid. Check that it was copied completely.");
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
  if (!found) throw unknownApiKey();
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
      credential: { kind: "key" },
      counterKey: API_KEY_COUNTER_PREFIX + row.id,
    },
    hits: found.hits,
  };
}

/** The scopes each `insufficient_scope` error of `assertScope` asked for (one of them would do). */
const neededScopes = new WeakMap<object, readonly Scope[]>();

/** The scopes an `insufficient_scope` error thrown by `assertScope` asked for (one would do), else undefined. */
export function scopesNeededBy(err: unknown): readonly Scope[] | undefined {
  return typeof err === "object" && err !== null ? neededScopes.get(err) : undefined;
}

/**
 * Checks that the credential holds at least one of `anyOf`.
 * @throws DomainError 403 `insufficient_scope`, naming the scope(s) in `detail` (`scopesNeededBy` gives them back).
 */
export function assertScope(auth: AuthContext, anyOf: Scope[]): void {
  if (anyOf.some((s) => auth.scopes.includes(s))) return;
  const needed = anyOf.join(" or ");
  const err =
    auth.credential.kind === "oauth"
      ? domainError("insufficient_scope", `This access token lacks the ${needed} scope. Connect ${auth.credential.appName} again and grant ${needed}.`)
      : domainError("insufficient_scope", `This API key lacks the ${needed} scope. Create a key with ${needed} in Company Settings.`);
  neededScopes.set(err, [...anyOf]);
  throw err;
}

/**
 * Who manages keys and within which company. The console passes the signed-in user's company (`companyId`), so a key
 * of another company is 404; the admin CLI / admin API works across companies (`companyId` undefined).
 */
export interface KeyManager {
  actor: AuditActor;
  companyId?: string;
  /** Client IP for the audit log. */
  ip?: string | null;
}

/**
 * Creates an API key (spec "Authentication": name, scopes, optional expiry; all scopes by default) and records
 * `api_key.created`. Body `KeyCreateSchema` `{ company_id, name, scopes?, expires_at? }`; a console caller's
 * `companyId` must equal `company_id`. The key value is in the answer once and cannot be retrieved afterwards.
 * Used by the admin CLI, the admin API and the console alike.
 * @returns `KeyCreatedSchema` `{ id, name, scopes, key }`.
 * @throws DomainError 400 `validation_failed` (unknown scope, `expires_at` not a future ISO 8601 date-time, ...);
 * 404 `not_found` (company).
 */
export async function createKey(prisma: PrismaClient, body: unknown, by: KeyManager): Promise<KeyCreated> {
  const input = parseInput(KeyCreateSchema, body);
  const expiresAt = input.expires_at !== undefined ? new Date(input.expires_at) : null;
  if (expiresAt && expiresAt.getTime() <= Date.now()) {
    throw domainError("validation_failed", "The request body is invalid (expires_at).", {
      errors: [{ path: "expires_at", message: `expires_at must be in the future (got ${input.expires_at}).` }],
    });
  }
  if (by.companyId !== undefined && by.companyId !== input.company_id) throw notFound("Company", input.company_id);
  await requireCompany(prisma, input.company_id);
  const { row, key } = await createApiKey(prisma, { companyId: input.company_id, name: input.name, scopes: input.scopes, expiresAt });
  await auditKey(prisma, by, "api_key.created", row, { prefix: row.prefix, scopes: row.scopes, expires_at: row.expiresAt?.toISOString() ?? null });
  const { id, name, prefix, scopes, expires_at, created_at } = toKeySummary(row);
  return { id, name, prefix, scopes, expires_at, created_at, key };
}

/**
 * Every key of a company, newest first, without key values.
 * @returns `KeySummarySchema[]`. @throws DomainError 404 `not_found` (company).
 */
export async function listKeys(prisma: PrismaClient, companyId: string): Promise<KeySummary[]> {
  await requireCompany(prisma, companyId);
  return (await keys.listKeys(prisma, companyId)).map(toKeySummary);
}

/**
 * The key `keyId`, looked up within `by.companyId` when set.
 * @throws DomainError 404 `not_found` when it does not exist or belongs to another company.
 */
export async function getKey(prisma: PrismaClient, keyId: string, by: Pick<KeyManager, "companyId">): Promise<KeySummary> {
  return toKeySummary(await requireKey(prisma, keyId, by.companyId));
}

async function requireKey(prisma: PrismaClient, keyId: string, companyId: string | undefined): Promise<ApiKey> {
  const row = await keys.findKey(prisma, keyId);
  if (!row || (companyId !== undefined && row.companyId !== companyId)) throw notFound("API key", keyId);
  return row;
}

/**
 * Renames a key and records `api_key.renamed`. Body `KeyRenameSchema` `{ name }`.
 * @returns the key's `KeySummarySchema`. @throws DomainError 400 `validation_failed`; 404 `not_found` (key).
 */
export async function renameKey(prisma: PrismaClient, keyId: string, body: unknown, by: KeyManager): Promise<KeySummary> {
  const { name } = parseInput(KeyRenameSchema, body);
  const before = await requireKey(prisma, keyId, by.companyId);
  const row = await keys.renameKey(prisma, keyId, name);
  if (!row) throw notFound("API key", keyId);
  await auditKey(prisma, by, "api_key.renamed", row, { from: before.name, to: row.name });
  return toKeySummary(row);
}

/**
 * Revokes a key (from now on it gets 401 `invalid_api_key`) and records `api_key.revoked` the first time. Revoking
 * twice keeps the first revocation time.
 * @returns the key's `KeySummarySchema`. @throws DomainError 404 `not_found` (key).
 */
export async function revokeKey(prisma: PrismaClient, keyId: string, by: KeyManager): Promise<KeySummary> {
  const before = await requireKey(prisma, keyId, by.companyId);
  const row = await keys.revokeKey(prisma, keyId, new Date());
  if (!row) throw notFound("API key", keyId);
  if (!before.revokedAt) {
    await auditKey(prisma, by, "api_key.revoked", row, { prefix: row.prefix });
  }
  return toKeySummary(row);
}

/** A stored key as lists show it (`KeySummarySchema`): never the key value, only its prefix. */
export function toKeySummary(row: ApiKey): KeySummary {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: knownScopes(row.scopes),
    expires_at: row.expiresAt?.toISOString() ?? null,
    revoked_at: row.revokedAt?.toISOString() ?? null,
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
  };
}

/** A key's state at `now`: `revoked`, `expired` or `active`. */
export function keyStatus(key: KeySummary, now: Date = new Date()): "active" | "expired" | "revoked" {
  if (key.revoked_at) return "revoked";
  if (key.expires_at && new Date(key.expires_at) <= now) return "expired";
  return "active";
}

/** Records `action` on key `row` by `by` in the company's audit log. */
function auditKey(prisma: PrismaClient, by: KeyManager, action: AuditAction, row: ApiKey, details: Record<string, Prisma.InputJsonValue | null>) {
  return recordAudit(prisma, { companyId: row.companyId, actor: by.actor, action, target: { type: "api_key", id: row.id, label: row.name }, ip: by.ip, details });
}

function knownScopes(stored: string[]): Scope[] {
  return SCOPES.filter((scope) => stored.includes(scope));
}

/**
 * The admin operations: companies, API keys (spec "Authentication": a key has a name, scopes and an optional
 * expiration, can be renamed and revoked, new keys get all scopes) and pipeline import. The admin HTTP routes
 * (admin-routes.ts) and the CLI's direct-database path (admin-client.ts) both call exactly these functions, so the
 * two ways of running a command cannot behave differently. Inputs are raw bodies, parsed here with the shared admin
 * schemas; failures are DomainErrors (CONTRACT "Errors").
 */
import {
  KeyCreateSchema,
  KeyRenameSchema,
  SCOPES,
  type CompanyCreated,
  type KeyCreated,
  type KeySummary,
  type Scope,
  parseInput,
} from "@stageline/shared";
import * as keys from "../db/api-keys";
import type { ApiKey, PrismaClient } from "../generated/prisma/client";
import { domainError, notFound } from "../services/errors";
import { createApiKey } from "../services/api-keys";
import * as companies from "../services/companies";
import type { CompanySubscription } from "../services/companies";
import * as pipelines from "../services/pipeline-import";
import type { ImportedPipeline } from "../services/pipeline-import";

/**
 * Creates a company. Body `CompanyCreateSchema` `{ name }`.
 * @returns `{ id, name }`. @throws 400 `validation_failed`.
 */
export function createCompany(prisma: PrismaClient, body: unknown): Promise<CompanyCreated> {
  return companies.createCompany(prisma, body);
}

/**
 * Switches a company's subscription. Body `{ active: boolean }`.
 * @returns `{ id, name, subscription_active }`. @throws 400 `validation_failed`; 404 `not_found` (company).
 */
export function setSubscription(prisma: PrismaClient, companyId: string, body: unknown): Promise<CompanySubscription> {
  return companies.setCompanySubscription(prisma, companyId, body);
}

/**
 * Creates an API key. Body `KeyCreateSchema` `{ company_id, name, scopes?, expires_at? }`; without `scopes` the key
 * gets every scope. The key value is in the answer once and cannot be retrieved afterwards.
 * @returns `KeyCreatedSchema` `{ id, name, scopes, key }`.
 * @throws 400 `validation_failed` (unknown scope, `expires_at` not a future ISO 8601 date-time, ...); 404 `not_found` (company).
 */
export async function createKey(prisma: PrismaClient, body: unknown): Promise<KeyCreated> {
  const input = parseInput(KeyCreateSchema, body);
  const expiresAt = input.expires_at !== undefined ? new Date(input.expires_at) : null;
  if (expiresAt && expiresAt.getTime() <= Date.now()) {
    throw domainError("validation_failed", "The request body is invalid (expires_at).", {
      errors: [{ path: "expires_at", message: `expires_at must be in the future (got ${input.expires_at}).` }],
    });
  }
  await companies.requireCompany(prisma, input.company_id);
  const { row, key } = await createApiKey(prisma, {
    companyId: input.company_id,
    name: input.name,
    scopes: input.scopes,
    expiresAt,
  });
  return { id: row.id, name: row.name, scopes: knownScopes(row.scopes), key };
}

/**
 * Every key of a company, newest first, without key values.
 * @returns `KeySummarySchema[]`. @throws 404 `not_found` (company).
 */
export async function listKeys(prisma: PrismaClient, companyId: string): Promise<KeySummary[]> {
  await companies.requireCompany(prisma, companyId);
  return (await keys.listKeys(prisma, companyId)).map(toKeySummary);
}

/**
 * Renames a key. Body `KeyRenameSchema` `{ name }`.
 * @returns the key's `KeySummarySchema`. @throws 400 `validation_failed`; 404 `not_found` (key).
 */
export async function renameKey(prisma: PrismaClient, keyId: string, body: unknown): Promise<KeySummary> {
  const { name } = parseInput(KeyRenameSchema, body);
  const row = await keys.renameKey(prisma, keyId, name);
  if (!row) throw notFound("API key", keyId);
  return toKeySummary(row);
}

/**
 * Revokes a key: from now on it gets 401 `invalid_api_key`. Revoking twice keeps the first revocation time.
 * @returns the key's `KeySummarySchema`. @throws 404 `not_found` (key).
 */
export async function revokeKey(prisma: PrismaClient, keyId: string): Promise<KeySummary> {
  const row = await keys.revokeKey(prisma, keyId, new Date());
  if (!row) throw notFound("API key", keyId);
  return toKeySummary(row);
}

/**
 * Imports a pipeline file (`PipelineImportSchema`) for a company; see services/pipeline-import.ts.
 * @returns the pipeline with its stages and statuses. @throws 400 `validation_failed`; 404 `not_found` (company).
 */
export function importPipeline(prisma: PrismaClient, companyId: string, body: unknown): Promise<ImportedPipeline> {
  return pipelines.importPipeline(prisma, companyId, body);
}

/** A stored key as the admin API lists it (`KeySummarySchema`): never the key value, only its prefix. */
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

function knownScopes(stored: string[]): Scope[] {
  return SCOPES.filter((scope) => stored.includes(scope));
}

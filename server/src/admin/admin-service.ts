/**
 * The admin operations: companies, API keys (spec "Authentication": a key has a name, scopes and an optional
 * expiration, can be renamed and revoked, new keys get all scopes) and pipeline import. The admin HTTP routes
 * (admin-routes.ts) and the CLI's direct-database path (admin-client.ts) both call exactly these functions, so the
 * two ways of running a command cannot behave differently. Inputs are raw bodies, parsed here with the shared admin
 * schemas; failures are DomainErrors (CONTRACT "Errors").
 */
import type { CompanyCreated, KeyCreated, KeySummary } from "@stageline/shared";
import type { PrismaClient } from "../generated/prisma/client";
import * as apiKeys from "../services/api-keys";
import { CLI_ACTOR } from "../services/audit-log";
import * as users from "../services/users";
import type { UserSummary } from "../services/users";
import * as twoFactor from "../services/two-factor";
import type { TwoFactorReset, UserCreated } from "./admin-api";
import * as companies from "../services/companies";
import type { CompanySubscription } from "../services/companies";
import * as pipelines from "../services/pipeline-import";
import * as pipelineArchive from "../services/pipeline-archive";
import type { PipelineArchiveState } from "../services/pipeline-archive";
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
 * Creates an API key: services/api-keys.ts `createKey` (the console's too), audited as the CLI.
 * @returns `KeyCreatedSchema` `{ id, name, scopes, key }`. @throws 400 `validation_failed`; 404 `not_found` (company).
 */
export function createKey(prisma: PrismaClient, body: unknown): Promise<KeyCreated> {
  return apiKeys.createKey(prisma, body, { actor: CLI_ACTOR });
}

/**
 * Every key of a company, newest first, without key values.
 * @returns `KeySummarySchema[]`. @throws 404 `not_found` (company).
 */
export function listKeys(prisma: PrismaClient, companyId: string): Promise<KeySummary[]> {
  return apiKeys.listKeys(prisma, companyId);
}

/**
 * Renames a key. Body `KeyRenameSchema` `{ name }`.
 * @returns the key's `KeySummarySchema`. @throws 400 `validation_failed`; 404 `not_found` (key).
 */
export function renameKey(prisma: PrismaClient, keyId: string, body: unknown): Promise<KeySummary> {
  return apiKeys.renameKey(prisma, keyId, body, { actor: CLI_ACTOR });
}

/**
 * Revokes a key: from now on it gets 401 `invalid_api_key`. Revoking twice keeps the first revocation time.
 * @returns the key's `KeySummarySchema`. @throws 404 `not_found` (key).
 */
export function revokeKey(prisma: PrismaClient, keyId: string): Promise<KeySummary> {
  return apiKeys.revokeKey(prisma, keyId, { actor: CLI_ACTOR });
}

/**
 * Imports a pipeline file (`PipelineImportSchema`) for a company; see services/pipeline-import.ts.
 * @returns the pipeline with its stages and statuses. @throws 422 `validation_failed` naming each blueprint limit
 * exceeded (shared blueprint-limits.ts); 400 `validation_failed`; 404 `not_found` (company).
 */
export function importPipeline(prisma: PrismaClient, companyId: string, body: unknown): Promise<ImportedPipeline> {
  return pipelines.importPipeline(prisma, companyId, body);
}

/**
 * Archives a pipeline of any company by id (CONTRACT "Pipelines, blueprints, transitions"); see
 * services/pipeline-archive.ts. Recorded in its company's audit log as done by `cli`.
 * @returns its archive state. @throws 404 `not_found` (pipeline).
 */
export function archivePipeline(prisma: PrismaClient, pipelineId: string): Promise<PipelineArchiveState> {
  return pipelineArchive.archivePipeline(prisma, pipelineId, { actor: CLI_ACTOR });
}

/**
 * Restores an archived pipeline of any company by id; see services/pipeline-archive.ts.
 * @returns its archive state. @throws 404 `not_found` (pipeline).
 */
export function restorePipeline(prisma: PrismaClient, pipelineId: string): Promise<PipelineArchiveState> {
  return pipelineArchive.restorePipeline(prisma, pipelineId, { actor: CLI_ACTOR });
}


/** A user with a generated password, as `users create` / `users reset-password` print it. */
function withPassword(user: UserSummary & { password: string }): UserCreated {
  return { id: user.id, email: user.email, role: user.role, company_id: user.company_id, password: user.password };
}

/**
 * Creates a console user with a generated password (services/users.ts `createUser`), audited as the CLI.
 * Body `{ company_id, email, role }`.
 * @returns `{ id, email, role, company_id, password }`; the password is shown once.
 * @throws 400 `validation_failed` (email, role, email taken); 404 `not_found` (company).
 */
export async function createUser(prisma: PrismaClient, body: unknown): Promise<UserCreated> {
  return withPassword(await users.createUser(prisma, body, { actor: CLI_ACTOR }));
}

/** Every user of a company. @throws 404 `not_found` (company). */
export function listUsers(prisma: PrismaClient, companyId: string): Promise<UserSummary[]> {
  return users.listUsers(prisma, companyId);
}

/**
 * Gives a user a new generated password and ends their sessions.
 * @returns `{ id, email, role, company_id, password }`. @throws 404 `not_found` (user).
 */
export async function resetPassword(prisma: PrismaClient, userId: string): Promise<UserCreated> {
  return withPassword(await users.resetPassword(prisma, userId, { actor: CLI_ACTOR }));
}

/**
 * Resets a user's two-factor sign-in (services/two-factor.ts `resetTwoFactor`): forgets the secret and recovery
 * codes and ends the user's sessions; audited as the CLI.
 * @returns `{ id, email, company_id }`. @throws 404 `not_found` (user).
 */
export function resetTwoFactor(prisma: PrismaClient, userId: string): Promise<TwoFactorReset> {
  return twoFactor.resetTwoFactor(prisma, userId, { actor: CLI_ACTOR });
}

/** Removes a user (not the company's last owner). @throws 400 `validation_failed` (last owner); 404 `not_found`. */
export function removeUser(prisma: PrismaClient, userId: string): Promise<UserSummary> {
  return users.removeUser(prisma, userId, { actor: CLI_ACTOR });
}

/**
 * The admin API as one interface, its HTTP paths and the response schemas the CLI checks answers with.
 *
 * | operation       | HTTP (under /admin, header x-admin-token)     | body                          | answer              |
 * |-----------------|-----------------------------------------------|-------------------------------|---------------------|
 * | createCompany   | POST  /admin/companies                        | CompanyCreateSchema           | 201 CompanyCreated  |
 * | setSubscription | PUT   /admin/companies/{id}/subscription      | `{ active }`                  | 200 subscription    |
 * | listKeys        | GET   /admin/companies/{id}/keys              |                               | 200 KeySummary[]    |
 * | importPipeline  | POST  /admin/companies/{id}/pipelines         | PipelineImportSchema          | 201 pipeline        |
 * | archivePipeline | POST  /admin/pipelines/{id}/archive           |                               | 200 archive state   |
 * | restorePipeline | POST  /admin/pipelines/{id}/restore           |                               | 200 archive state   |
 * | createKey       | POST  /admin/keys                             | KeyCreateSchema               | 201 KeyCreated      |
 * | renameKey       | PATCH /admin/keys/{id}                        | KeyRenameSchema               | 200 KeySummary      |
 * | revokeKey       | POST  /admin/keys/{id}/revoke                 |                               | 200 KeySummary      |
 * | createUser      | POST  /admin/users                            | UserCreateSchema              | 201 UserCreated     |
 * | listUsers       | GET   /admin/companies/{id}/users             |                               | 200 UserSummary[]   |
 * | resetPassword   | POST  /admin/users/{id}/reset-password        |                               | 200 UserCreated     |
 * | removeUser      | DELETE /admin/users/{id}                      |                               | 200 UserSummary     |
 * | resetTwoFactor  | POST  /admin/users/{id}/reset-two-factor      |                               | 200 TwoFactorReset  |
 *
 * Errors are problem+json bodies (CONTRACT "Errors"); a missing or wrong admin token is 401.
 */
import { z } from "zod";
import {
  PipelineSchema,
  StageSchema,
  StatusSchema,
  type CompanyCreated,
  type KeyCreated,
  type KeySummary,
} from "@stageline/shared";
import type { CompanySubscription } from "../services/companies";
import { ROLES, type UserSummary } from "../services/users";
import type { ImportedPipeline } from "../services/pipeline-import";
import type { PipelineArchiveState } from "../services/pipeline-archive";

/** Request header carrying the admin token (compared in constant time with the server's token). */
export const ADMIN_TOKEN_HEADER = "x-admin-token";

/** Mount point of the admin API. */
export const ADMIN_BASE_PATH = "/admin";

/** Path builders, relative to ADMIN_BASE_PATH. */
export const adminPaths = {
  companies: () => "/companies",
  subscription: (companyId: string) => `/companies/${encodeURIComponent(companyId)}/subscription`,
  companyKeys: (companyId: string) => `/companies/${encodeURIComponent(companyId)}/keys`,
  companyPipelines: (companyId: string) => `/companies/${encodeURIComponent(companyId)}/pipelines`,
  pipelineArchive: (pipelineId: string) => `/pipelines/${encodeURIComponent(pipelineId)}/archive`,
  pipelineRestore: (pipelineId: string) => `/pipelines/${encodeURIComponent(pipelineId)}/restore`,
  keys: () => "/keys",
  key: (keyId: string) => `/keys/${encodeURIComponent(keyId)}`,
  keyRevoke: (keyId: string) => `/keys/${encodeURIComponent(keyId)}/revoke`,
  users: () => "/users",
  companyUsers: (companyId: string) => `/companies/${encodeURIComponent(companyId)}/users`,
  user: (userId: string) => `/users/${encodeURIComponent(userId)}`,
  userResetPassword: (userId: string) => `/users/${encodeURIComponent(userId)}/reset-password`,
  userResetTwoFactor: (userId: string) => `/users/${encodeURIComponent(userId)}/reset-two-factor`,
};

/** A console user as the admin API lists it (never the password or its hash). */
export const UserSummarySchema: z.ZodType<UserSummary> = z.object({
  id: z.string(),
  name: z.string().nullable(),
  email: z.string(),
  role: z.enum(ROLES),
  company_id: z.string(),
  created_at: z.string(),
});

/** A created user, or one whose password was reset, with the generated password (shown once). */
export const UserCreatedSchema = z.object({
  id: z.string(),
  email: z.string(),
  role: z.enum(ROLES),
  company_id: z.string(),
  password: z.string(),
});
/** Answer of `users create` and `users reset-password`. */
export type UserCreated = z.infer<typeof UserCreatedSchema>;

/** Answer of `users reset-2fa`: the user whose two-factor sign-in was reset. */
export const TwoFactorResetSchema = z.object({ id: z.string(), email: z.string(), company_id: z.string() });
/** Answer of `users reset-2fa`. */
export type TwoFactorReset = z.infer<typeof TwoFactorResetSchema>;

/** Answer of a subscription change. */
export const CompanySubscriptionSchema: z.ZodType<CompanySubscription> = z.object({
  id: z.string(),
  name: z.string(),
  subscription_active: z.boolean(),
});

/** Answer of a pipeline import: the Pipeline fields, its short-id prefix, stages in order with their statuses. */
export const ImportedPipelineSchema: z.ZodType<ImportedPipeline> = PipelineSchema.extend({
  short_id_prefix: z.string(),
  stages: z.array(StageSchema.extend({ statuses: z.array(StatusSchema) })),
});

/** Answer of `pipelines archive` and `pipelines restore`: the pipeline and when it was archived (null: not archived). */
export const PipelineArchiveStateSchema: z.ZodType<PipelineArchiveState> = z.object({
  id: z.string(),
  name: z.string(),
  company_id: z.string(),
  archived_at: z.string().nullable(),
});

/**
 * Every admin operation. Bodies are passed unparsed: the server side parses them with the shared schemas, so a CLI
 * talking HTTP and a CLI opening the database get the same validation. Failures reject with a DomainError.
 */
export interface AdminApi {
  createCompany(body: unknown): Promise<CompanyCreated>;
  setSubscription(companyId: string, body: unknown): Promise<CompanySubscription>;
  createKey(body: unknown): Promise<KeyCreated>;
  listKeys(companyId: string): Promise<KeySummary[]>;
  renameKey(keyId: string, body: unknown): Promise<KeySummary>;
  revokeKey(keyId: string): Promise<KeySummary>;
  importPipeline(companyId: string, body: unknown): Promise<ImportedPipeline>;
  archivePipeline(pipelineId: string): Promise<PipelineArchiveState>;
  restorePipeline(pipelineId: string): Promise<PipelineArchiveState>;
  createUser(body: unknown): Promise<UserCreated>;
  listUsers(companyId: string): Promise<UserSummary[]>;
  resetPassword(userId: string): Promise<UserCreated>;
  removeUser(userId: string): Promise<UserSummary>;
  resetTwoFactor(userId: string): Promise<TwoFactorReset>;
}

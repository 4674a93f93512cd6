import { z } from "zod";
import { dateTimeField, idField, strictBody, textField } from "./fields";
import { SCOPES, ScopeSchema } from "./scopes";

const timestamp = z.iso.datetime({ offset: true });

/** Admin API (used by the CLI): body that creates a company. Companies are not part of the external API. */
export const CompanyCreateSchema = strictBody({
  name: textField("name"),
});
/** Body of the admin company create. */
export type CompanyCreate = z.infer<typeof CompanyCreateSchema>;

/** Admin API: the created company. */
export const CompanyCreatedSchema = z.object({
  id: z.string(),
  name: z.string(),
});
/** A created company. */
export type CompanyCreated = z.infer<typeof CompanyCreatedSchema>;

/** A key's scopes: at least one, each once. */
const scopeList = z
  .array(ScopeSchema, { error: `scopes must be a list of scopes: ${SCOPES.join(", ")}.` })
  .min(1, { error: "scopes must list at least one scope (leave it out for all scopes)." })
  .refine((list) => new Set(list).size === list.length, { error: "scopes lists a scope more than once." });

/**
 * Spec "Authentication" (a key has a name, scopes, an optional expiration; new keys get all scopes by default):
 * admin body that creates an API key for a company.
 */
export const KeyCreateSchema = strictBody({
  company_id: idField("company_id"),
  name: textField("name"),
  scopes: scopeList.default(() => [...SCOPES]),
  expires_at: dateTimeField("expires_at").optional(),
});
/** Parsed admin key-create body (scopes always present). */
export type KeyCreate = z.infer<typeof KeyCreateSchema>;

/** Spec "Authentication" (a key can be renamed): admin body that renames a key. */
export const KeyRenameSchema = strictBody({
  name: textField("name"),
});
/** Body of the admin key rename. */
export type KeyRename = z.infer<typeof KeyRenameSchema>;

/** Spec "Authentication" (the key value is displayed once at creation): the created key with its secret `key`. */
export const KeyCreatedSchema = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  scopes: z.array(ScopeSchema),
  expires_at: timestamp.nullable(),
  created_at: timestamp,
  key: z.string(),
});
/** A created key, with its value. */
export type KeyCreated = z.infer<typeof KeyCreatedSchema>;

/** Spec "Authentication": a key as listed by the admin API; never carries the key value, only its `prefix`. */
export const KeySummarySchema = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  scopes: z.array(ScopeSchema),
  expires_at: timestamp.nullable(),
  revoked_at: timestamp.nullable(),
  last_used_at: timestamp.nullable(),
  created_at: timestamp,
});
/** A listed key. */
export type KeySummary = z.infer<typeof KeySummarySchema>;

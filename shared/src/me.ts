import { z } from "zod";
import { ScopeSchema } from "./scopes";

/**
 * CONTRACT "Connect with OAuth 2.1": which credential called `/me`: an API key (`type: "key"`, `app: null`), or an
 * OAuth access token (`type: "oauth"`) of the connected app `app` (its OAuth `client_id` and its name: the client's
 * registered `client_name`, else its `client_id`).
 */
export const MeCredentialSchema = z.object({
  type: z.enum(["key", "oauth"]),
  app: z.object({ client_id: z.string(), name: z.string() }).nullable(),
});

/**
 * CONTRACT "Responses" (Who am I): body of GET /v1/ext/me, for Zapier's auth test and connection label.
 * `key.id` is the id recorded as a task's `created_by`. For an OAuth access token (issue 32) `key` describes the
 * grant: `id` the grant's id (what its tasks and notes record as `created_by`), `name` the app's name, `scopes` the
 * granted API scopes, `expires_at` the access token's expiry; `credential` says which kind called.
 */
export const MeSchema = z.object({
  company: z.object({
    id: z.string(),
    name: z.string(),
  }),
  key: z.object({
    id: z.string(),
    name: z.string(),
    scopes: z.array(ScopeSchema),
    expires_at: z.iso.datetime({ offset: true }).nullable(),
  }),
  credential: MeCredentialSchema,
});
/** The authenticated company and key (or OAuth grant), and which credential called. */
export type Me = z.infer<typeof MeSchema>;

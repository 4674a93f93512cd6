import { z } from "zod";
import { ScopeSchema } from "./scopes";

/**
 * CONTRACT "Responses" (Who am I): body of GET /v1/ext/me, for Zapier's auth test and connection label.
 * `key.id` is the id recorded as a task's `created_by`.
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
});
/** The authenticated company and key. */
export type Me = z.infer<typeof MeSchema>;

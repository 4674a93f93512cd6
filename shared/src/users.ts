import { z } from "zod";
import { CursorSchema, LimitSchema } from "./pagination";

/** CONTRACT "People": a display name is 1..255 characters (set by each user in the console). */
export const USER_NAME_MAX = 255;

/**
 * CONTRACT "People": a console user of the caller's company as GET /v1/ext/users returns it, and as a task's
 * `assignee`. `name` is the display name the user set in the console, `null` until then. No role and no security state.
 */
export const UserSchema = z.object({
  user_id: z.string(),
  name: z.string().nullable(),
  email: z.string(),
});
/** A user of the company. */
export type User = z.infer<typeof UserSchema>;

/** CONTRACT "People" + "Lists": query of GET /v1/ext/users (sorted by name, then email; keyset pages). */
export const UserListQuerySchema = z.object({
  limit: LimitSchema,
  cursor: CursorSchema,
});
/** Parsed query of GET /v1/ext/users. */
export type UserListQuery = z.infer<typeof UserListQuerySchema>;

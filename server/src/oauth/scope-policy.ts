/**
 * Which scopes a console user may grant an OAuth app, by role (CONTRACT "Connect with OAuth 2.1": a grant never gives
 * an app more than its user may do). The console mirrors the same line: webhooks are managed by admins and owners
 * only (console/pages/webhooks.ts), so `hooks:manage` is theirs to grant; every role works with items and tasks, so
 * members may grant `items:*` and `tasks:*`. `offline_access` (a refresh token) is grantable by everyone.
 */
import { SCOPES, type Scope } from "@stageline/shared";
import { roleAtLeast, type Role } from "../services/users";

/** Every scope the authorization server knows: the five API scopes plus `offline_access`. */
export const OAUTH_SCOPES: readonly string[] = [...SCOPES, "offline_access"];

/** The lowest role that may grant each API scope. */
const MIN_ROLE: Record<Scope, Role> = {
  "items:read": "member",
  "items:write": "member",
  "tasks:read": "member",
  "tasks:write": "member",
  "hooks:manage": "admin",
};

/** True when a user of `role` may grant `scope` (an unknown scope: false). */
export function mayGrantScope(role: string, scope: string): boolean {
  if (scope === "offline_access") return true;
  const min = MIN_ROLE[scope as Scope];
  return min !== undefined && roleAtLeast(role, min);
}

/**
 * The scopes granted when a user of `role` consents: those `requested` that the user left ticked (`ticked`) and that
 * the role may grant, in the order requested, without duplicates.
 */
export function grantableScopes(role: string, requested: readonly string[], ticked: readonly string[]): string[] {
  const keep = new Set(ticked);
  return [...new Set(requested)].filter((s) => keep.has(s) && mayGrantScope(role, s));
}

/**
 * Who sees and revokes which OAuth grants on the console's "Connected apps" page (issue 32, CONTRACT "Connect with
 * OAuth 2.1"): owners and admins every grant of their company, a member only the grants they gave themselves.
 * Developer apps (registered clients) are for owners and admins only (`DEVELOPER_APPS_MIN_ROLE`).
 */
import { roleAtLeast, type Role } from "./users";

/** The lowest role that registers and deletes clients ("Developer apps"). */
export const DEVELOPER_APPS_MIN_ROLE: Role = "admin";

/**
 * Whose grants `viewer` may list and revoke: `undefined` for every user of the company (owners, admins), else the
 * viewer's own user id (members).
 */
export function grantOwnerFilter(viewer: { userId: string; role: string }): string | undefined {
  return roleAtLeast(viewer.role, "admin") ? undefined : viewer.userId;
}

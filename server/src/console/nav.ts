/**
 * The console's navigation: one entry per section, shown to roles at or above `minRole`. A new section adds its
 * entry here (see README.md in this folder).
 */
import { roleAtLeast, type Role } from "../services/users";

/** A navigation entry: `href` relative to /console. */
export interface NavItem {
  href: string;
  label: string;
  minRole: Role;
}

/** Every section, in menu order. */
export const NAV_ITEMS: NavItem[] = [
  { href: "/keys", label: "API keys", minRole: "member" },
  { href: "/webhooks", label: "Webhooks", minRole: "member" },
  { href: "/pipelines", label: "Pipelines", minRole: "member" },
  { href: "/connected-apps", label: "Connected apps", minRole: "member" },
  { href: "/developer-apps", label: "Developer apps", minRole: "admin" },
  { href: "/team", label: "Team", minRole: "owner" },
  { href: "/audit", label: "Audit log", minRole: "admin" },
  { href: "/requests", label: "Requests", minRole: "member" },
  { href: "/profile", label: "Your profile", minRole: "member" },
  { href: "/two-factor", label: "Two-factor sign-in", minRole: "member" },
];

/** The entries `role` may see, `current` marking the one whose path starts the request path. */
export function navFor(role: Role, requestPath: string): { href: string; label: string; current: boolean }[] {
  const inConsole = requestPath.replace(/^\/console/, "");
  return NAV_ITEMS.filter((item) => roleAtLeast(role, item.minRole)).map((item) => ({
    href: `/console${item.href}`,
    label: item.label,
    current: inConsole === item.href || inConsole.startsWith(`${item.href}/`),
  }));
}

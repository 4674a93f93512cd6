/**
 * The console's navigation: one entry per section, shown to roles at or above `minRole`. A new section adds its
 * entry here (see README.md in this folder). Entries with a `group` are shown together under that group's name
 * (the Developers part: Events, and the request log beside it), at the place of the group's first entry.
 */
import { roleAtLeast, type Role } from "../services/users";

/** A named group of entries in the menu. */
export type NavGroup = "Developers";

/** A navigation entry: `href` relative to /console. */
export interface NavItem {
  href: string;
  label: string;
  minRole: Role;
  /** The group it is listed under (CONTRACT "Console: events, activity and charts": the Developers part). */
  group?: NavGroup;
}

/** Every section, in menu order. */
export const NAV_ITEMS: NavItem[] = [
  { href: "/keys", label: "API keys", minRole: "member" },
  { href: "/webhooks", label: "Webhooks", minRole: "member" },
  { href: "/pipelines", label: "Pipelines", minRole: "member" },
  { href: "/connected-apps", label: "Connected apps", minRole: "member" },
  { href: "/developer-apps", label: "Developer apps", minRole: "admin" },
  // The Developers part: members read, owners and admins also act (each page checks the role of its actions).
  { href: "/events", label: "Events", minRole: "member", group: "Developers" },
  { href: "/requests", label: "Requests", minRole: "member", group: "Developers" },
  { href: "/team", label: "Team", minRole: "owner" },
  { href: "/audit", label: "Audit log", minRole: "admin" },
  { href: "/profile", label: "Your profile", minRole: "member" },
  { href: "/two-factor", label: "Two-factor sign-in", minRole: "member" },
];

/** A link of the menu as the layout shows it. */
export interface NavLink {
  href: string;
  label: string;
  /** The request is on this section (its path, or one below it). */
  current: boolean;
}

/** A line of the menu: a link, or a named group of links (`id` for the group's `aria-labelledby`). */
export type NavEntry = ({ kind: "link" } & NavLink) | { kind: "group"; label: NavGroup; id: string; links: NavLink[] };

/**
 * The menu `role` may see, `current` marking the link whose path starts the request path; grouped entries are
 * gathered under their group at the place of its first entry.
 */
export function navFor(role: Role, requestPath: string): NavEntry[] {
  const inConsole = requestPath.replace(/^\/console/, "");
  const entries: NavEntry[] = [];
  for (const item of NAV_ITEMS.filter((i) => roleAtLeast(role, i.minRole))) {
    const link: NavLink = {
      href: `/console${item.href}`,
      label: item.label,
      current: inConsole === item.href || inConsole.startsWith(`${item.href}/`),
    };
    if (!item.group) {
      entries.push({ kind: "link", ...link });
      continue;
    }
    const group = entries.find((e) => e.kind === "group" && e.label === item.group);
    if (group?.kind === "group") group.links.push(link);
    else entries.push({ kind: "group", label: item.group, id: `nav-${item.group.toLowerCase()}`, links: [link] });
  }
  return entries;
}

/**
 * The console's one date format (CONTRACT "Console: events, activity and charts": `YYYY-MM-DD HH:mm UTC` everywhere,
 * e.g. `2026-12-07 23:04 UTC`). Views get it as `it.time` (console/views.ts `renderPage`); pages use it for notices.
 * The machine-readable instant stays in a `<time datetime>` attribute (full ISO 8601) where a view has one.
 */

/**
 * `when` (a Date, or an ISO 8601 string as the API formats return) as `YYYY-MM-DD HH:mm UTC` (seconds dropped, not
 * rounded). Null or undefined gives "" (callers print their own "Never" / "Not set").
 * @throws RangeError for an invalid date (a programming error: the console only shows stored instants).
 */
export function consoleTime(when: Date | string | null | undefined): string {
  if (when === null || when === undefined) return "";
  const date = typeof when === "string" ? new Date(when) : when;
  return `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/**
 * The response headers of a deprecated operation (CONTRACT "Versioning and compatibility"):
 * `Deprecation: @<unix seconds>` (RFC 9745), `Sunset: <HTTP-date>` (RFC 8594, once a date is set) and
 * `Link: <changelog entry>; rel="deprecation"` (RFC 9745 section 3). http/method-not-allowed.ts sets them on every
 * response of an operation the registry marks `deprecated`, before any other check, so errors carry them too.
 */
import { API_CHANGELOG_URL, DEPRECATION_HEADERS } from "@stageline/shared";
import type { ApiDeprecation } from "../openapi/operations";

/** UTC midnight of a `YYYY-MM-DD` day. @throws Error when `day` is not such a date (a registry mistake). */
function utcMidnight(day: string): Date {
  const date = new Date(`${day}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || Number.isNaN(date.getTime())) throw new Error(`Not a YYYY-MM-DD date: ${day}`);
  return date;
}

/**
 * The headers for `deprecation`, by name.
 * @returns e.g. `{ Deprecation: "@1795478400", Sunset: "Sat, 01 May 2027 00:00:00 GMT", Link: '<https://.../changelog#2026-11-24>; rel="deprecation"; type="text/html"' }`.
 * @throws Error when a date is not `YYYY-MM-DD`.
 */
export function deprecationHeaders(deprecation: ApiDeprecation): Record<string, string> {
  const headers: Record<string, string> = {
    [DEPRECATION_HEADERS.deprecation]: `@${utcMidnight(deprecation.since).getTime() / 1000}`,
    [DEPRECATION_HEADERS.link]: `<${API_CHANGELOG_URL}#${deprecation.changelogEntry}>; rel="deprecation"; type="text/html"`,
  };
  if (deprecation.sunset) headers[DEPRECATION_HEADERS.sunset] = utcMidnight(deprecation.sunset).toUTCString();
  return headers;
}

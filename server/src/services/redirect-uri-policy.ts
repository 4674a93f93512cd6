/**
 * Which redirect URIs a client may have: ONE policy for every way a client comes to exist (CONTRACT "Connect with
 * OAuth 2.1": "Dynamic registration follows the console's rules"): the console's Developer apps form
 * (services/oauth-clients.ts), Dynamic Client Registration (RFC 7591) and Client ID Metadata Documents (both through
 * oauth/provider.ts's client metadata validator).
 *
 * A redirect URI is matched exactly (oidc-provider compares registered and requested URIs as strings), so it must be
 * written exactly as a browser will reach it: at most `REDIRECT_URIS_MAX` per client, each at most
 * `REDIRECT_URI_MAX_LENGTH` characters, `https:` on any host or `http:` on a loopback host (RFC 8252 section 7.3;
 * OAuth 2.1 section 2.3.1), no fragment, and none of the forms a URL parser reads differently from how a person reads
 * them (OAuth 2.0 Security BCP, RFC 9700 section 4.1; WHATWG URL host parsing): a wildcard, userinfo
 * (`http://evil.example@127.0.0.1/`), a backslash (`http:\\host\cb`, read as `/`), a space or control character
 * (a tab is silently dropped by the parser), a missing `//`, or a host the parser rewrites (numeric IPv4 forms such as
 * `0x7f000001`, `0177.0.0.1`, `2130706433` or `127.1`, percent-encoded or non-ASCII hosts, long IPv6 forms).
 *
 * A refusal names the URI, quoted at most `QUOTED_URI_MAX` characters long with every character that is not plain URI
 * syntax percent-encoded, so the text carries no markup and no unbounded input (RFC 7591 section 3.2.2
 * `error_description`, and the console's form errors).
 */

/** Most redirect URIs one client may have. */
export const REDIRECT_URIS_MAX = 10;
/** Longest redirect URI, in characters. */
export const REDIRECT_URI_MAX_LENGTH = 2000;
/** Longest quotation of a refused URI in a refusal, in characters (then `...`). */
export const QUOTED_URI_MAX = 100;

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);
const USE_INSTEAD = "use https, or http only on a loopback address: 127.0.0.1, [::1] or localhost";

/** URI characters quoted as they are; anything else (`<`, `>`, `"`, `'`, `&`, spaces, controls, non-ASCII) encoded. */
const PLAIN = /^[A-Za-z0-9\-._~:/?#[\]@!$()*+,;=%]$/;
/** C0 controls, space, DEL and C1 controls. */
const CONTROL_OR_SPACE = /[\u0000-\u0020\u007f-\u009f]/;
/** `scheme://authority` at the start of a URI (RFC 3986 section 3), the authority captured. */
const AUTHORITY = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)/;
/** An authority's host (bracketed IPv6 literal or anything up to the port) and optional `:port`. */
const HOST_PORT = /^(\[[^\]]*\]|[^:]*)(?::[0-9]*)?$/;
const DOTTED_IPV4 = /^\d+\.\d+\.\d+\.\d+$/;

/**
 * `raw` as a refusal quotes it: characters outside `PLAIN` percent-encoded (UTF-8), cut to `QUOTED_URI_MAX`
 * characters (never inside an escape) with `...` appended when cut.
 */
export function quoteUri(raw: string): string {
  let out = "";
  for (const ch of raw) {
    const piece = PLAIN.test(ch) ? ch : encodeURIComponent(ch).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
    if (out.length + piece.length > QUOTED_URI_MAX) return `${out}...`;
    out += piece;
  }
  return out;
}

/** Why the host written as `written` (raw, lower-cased) is refused when the parser reads it as `parsed`, or null. */
function hostRefusal(written: string, parsed: string): string | null {
  if (written.includes("*")) return "has a wildcard (*) in its host: wildcards are not allowed, redirect URIs match exactly";
  if (written === parsed) return null;
  if (DOTTED_IPV4.test(parsed)) return `has a numeric host form that is read as ${parsed} (write an IPv4 address as four decimal numbers)`;
  return `has a host that is read as ${quoteUri(parsed)} (write the host exactly so)`;
}

/**
 * Why one redirect URI cannot be registered, as a phrase that follows the URI (e.g. "has a fragment (#)"), or null
 * when it is acceptable (see the file comment for the rules).
 * @param raw one redirect URI (anything: client metadata is untrusted input).
 */
export function redirectUriRefusal(raw: unknown): string | null {
  if (typeof raw !== "string") return "is not a string";
  if (raw.length > REDIRECT_URI_MAX_LENGTH) return `is ${raw.length} characters long (at most ${REDIRECT_URI_MAX_LENGTH} characters)`;
  const url = URL.parse(raw);
  if (!url) return "is not an absolute URL";
  if (CONTROL_OR_SPACE.test(raw)) return "contains a space or a control character (tab, line break)";
  if (raw.includes("\\")) return "contains a backslash (\\), which browsers read as /";
  if (url.protocol !== "https:" && url.protocol !== "http:") return `uses the ${quoteUri(url.protocol.slice(0, -1))} scheme (${USE_INSTEAD})`;
  const authority = AUTHORITY.exec(raw)?.[1];
  if (authority === undefined) return "does not start with https:// or http://";
  if (authority.includes("@") || url.username || url.password) return "carries a user name or password (@ before the host)";
  const written = HOST_PORT.exec(authority)?.[1]?.toLowerCase();
  const host = written === undefined ? `has a host that is read as ${quoteUri(url.hostname)}` : hostRefusal(written, url.hostname);
  if (host) return host;
  if (url.protocol === "http:" && !LOOPBACK_HOSTS.has(url.hostname)) return `is http on a host that is not a loopback host (${USE_INSTEAD})`;
  if (raw.includes("#")) return "has a fragment (#)";
  return null;
}

/**
 * Why the redirect URI list `uris` cannot be registered, or null: a non-empty array of at most `REDIRECT_URIS_MAX`
 * URIs each acceptable to `redirectUriRefusal`. The reason names the first refused URI by index and (quoted by
 * `quoteUri`) value, and starts with `redirect_uris` (oidc-provider's `InvalidClientMetadata` then answers
 * `invalid_redirect_uri` with it as `error_description`).
 * @param uris a client's `redirect_uris` (anything: the metadata is untrusted input).
 */
export function checkRedirectUris(uris: unknown): string | null {
  if (!Array.isArray(uris) || uris.length === 0) return "redirect_uris must list at least one URI";
  if (uris.length > REDIRECT_URIS_MAX) return `redirect_uris lists ${uris.length} URIs (at most ${REDIRECT_URIS_MAX})`;
  for (const [i, raw] of uris.entries()) {
    const why = redirectUriRefusal(raw);
    if (why === null) continue;
    const shown = typeof raw === "string" ? ` "${quoteUri(raw)}"` : "";
    return `redirect_uris[${i}]${shown} ${why}`;
  }
  return null;
}

/**
 * Which redirect URIs a client may register (CONTRACT "Connect with OAuth 2.1": https or loopback only; RFC 8252
 * section 7.3 for loopback). Matching stays exact (oidc-provider compares registered and requested URIs as strings).
 * A refusal says which URI and why (RFC 7591 section 3.2.2 `error_description`, shown to a registrant's developer):
 * the URI is quoted at most `QUOTED_URI_MAX` characters long, with every character that is not plain URI syntax
 * percent-encoded, so the text carries no markup and no unbounded input.
 */
import { REDIRECT_URI_MAX_LENGTH } from "../services/oauth-clients";

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);

/** Longest quotation of a refused URI in a refusal, in characters (then `...`). */
export const QUOTED_URI_MAX = 100;

/** URI characters quoted as they are; anything else (`<`, `>`, `"`, `'`, `&`, spaces, controls, non-ASCII) encoded. */
const PLAIN = /^[A-Za-z0-9\-._~:/?#[\]@!$()*+,;=%]$/;

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

/** Why one redirect URI cannot be registered (a phrase), or null. */
function refusal(raw: unknown): string | null {
  if (typeof raw !== "string") return "is not a string";
  if (raw.length > REDIRECT_URI_MAX_LENGTH) return `is ${raw.length} characters long (at most ${REDIRECT_URI_MAX_LENGTH})`;
  const url = URL.parse(raw);
  if (!url) return "is not an absolute URL";
  if (raw.includes("#")) return "has a fragment (#)";
  if (url.protocol === "https:") return null;
  if (url.protocol === "http:") {
    return LOOPBACK_HOSTS.has(url.hostname) ? null : "is http on a host that is not a loopback host (use https, or http on 127.0.0.1, [::1] or localhost)";
  }
  return `uses the ${quoteUri(url.protocol.slice(0, -1))} scheme (use https, or http on 127.0.0.1, [::1] or localhost)`;
}

/**
 * Why `uris` cannot be registered, or null when every one is an https URL or an http URL on a loopback host, at most
 * `REDIRECT_URI_MAX_LENGTH` characters long, without fragment. The reason names the first refused URI by index and
 * (quoted by `quoteUri`) value, and starts with `redirect_uris` (oidc-provider's `InvalidClientMetadata` then
 * answers `invalid_redirect_uri`).
 * @param uris a client's `redirect_uris` (anything: the metadata is untrusted input).
 */
export function checkRedirectUris(uris: unknown): string | null {
  if (!Array.isArray(uris) || uris.length === 0) return "redirect_uris must list at least one URI";
  for (const [i, raw] of uris.entries()) {
    const why = refusal(raw);
    if (why === null) continue;
    const shown = typeof raw === "string" ? ` "${quoteUri(raw)}"` : "";
    return `redirect_uris[${i}]${shown} ${why}`;
  }
  return null;
}

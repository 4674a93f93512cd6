/**
 * Which redirect URIs a client may register (CONTRACT "Connect with OAuth 2.1": https or loopback only; RFC 8252
 * section 7.3 for loopback). Matching stays exact (oidc-provider compares registered and requested URIs as strings).
 */
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);

/**
 * Why `uris` cannot be registered, or null when every one is an https URL or an http URL on a loopback host.
 * @param uris a client's `redirect_uris` (anything: the metadata is untrusted input).
 */
export function checkRedirectUris(uris: unknown): string | null {
  if (!Array.isArray(uris) || uris.length === 0) return "redirect_uris must list at least one URI";
  for (const raw of uris) {
    const url = typeof raw === "string" ? URL.parse(raw) : null;
    if (!url) return "redirect_uris must be absolute URLs";
    if (url.protocol === "https:") continue;
    if (url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname)) continue;
    return "redirect_uris must be https URLs or http URLs on a loopback host (127.0.0.1, [::1], localhost)";
  }
  return null;
}

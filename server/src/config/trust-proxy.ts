/**
 * `TRUST_PROXY`: which reverse proxies Express believes about the client address and protocol (`X-Forwarded-For`,
 * `X-Forwarded-Proto`; Express "behind proxies"). Unset means `loopback` (a proxy on the same machine). Behind a
 * TLS-terminating proxy, set it (e.g. `1` for one hop, or the proxy's address/CIDR) so the console sees https and
 * issues `Secure`, `__Host-` cookies.
 */

/** Express's `trust proxy` value for `raw`: `true`/`false`, a hop count, or an address list (string). */
export function parseTrustProxy(raw: string | undefined): boolean | number | string {
  if (raw === undefined || raw.trim() === "") return "loopback";
  const value = raw.trim();
  if (value === "true") return true;
  if (value === "false") return false;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}

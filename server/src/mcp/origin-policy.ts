/**
 * Which browser `Origin` the MCP endpoint serves (CONTRACT "MCP server": an Origin not allowed is 403; MCP "Streamable
 * HTTP", Security Warning: servers MUST validate `Origin` against DNS rebinding; MCP "Security Best Practices", local
 * MCP server compromise). Requests without `Origin` (not from a browser) pass.
 * - Every mode: the origins of MCP_ALLOWED_ORIGINS, exactly.
 * - Development and test mode only: the server's own loopback origin, `http://127.0.0.1:<port>`,
 *   `http://localhost:<port>` or `http://[::1]:<port>`, where `<port>` is the port the request came in on (the
 *   server's own) or the port of a loopback `Host` the request was addressed to (a local proxy that keeps `Host`). A
 *   page of another local port, or a rebinding name such as `evil.example` resolving to 127.0.0.1, stays refused: its
 *   Origin (or Host) is not one of those loopback names and ports. Production never accepts one it was not told of.
 */
import type { Mode } from "../config/config";

/** The loopback host names of a development server's own origin (URL `hostname` form). */
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** The port of `url`'s authority, the scheme's default when absent. */
function portOf(url: URL): string {
  return url.port || (url.protocol === "https:" ? "443" : "80");
}

/**
 * Whether a request with `origin` may be served.
 * @param origin the `Origin` header, or undefined when absent (always allowed).
 * @param request `localPort` (the socket's local port: the server's own) and `host` (the `Host` header).
 */
export function originAllowed(
  origin: string | undefined,
  allowed: readonly string[],
  mode: Mode,
  request: { localPort: number | undefined; host: string | undefined },
): boolean {
  if (origin === undefined || allowed.includes(origin)) return true;
  if (mode === "production") return false;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== "http:" || !LOOPBACK_HOSTS.has(url.hostname) || url.origin !== origin) return false;
  const port = portOf(url);
  if (request.localPort !== undefined && port === String(request.localPort)) return true;
  if (request.host === undefined) return false;
  let host: URL;
  try {
    host = new URL(`http://${request.host}`);
  } catch {
    return false;
  }
  return LOOPBACK_HOSTS.has(host.hostname) && portOf(host) === port;
}

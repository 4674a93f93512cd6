/**
 * The two OAuth protected resources of Stageline (CONTRACT "Connect with OAuth 2.1"; RFC 8707 resource indicators,
 * RFC 9728 protected resource metadata): the REST API under `/v1/ext` and the MCP endpoint `/v1/ext/mcp`. An access
 * token is bound to exactly one of them (its `aud`), and a token for one is refused at the other.
 */

/** Path of the REST API resource (every `/v1/ext` endpoint except the MCP endpoint). */
export const REST_RESOURCE_PATH = "/v1/ext";
/** Path of the MCP endpoint resource. */
export const MCP_RESOURCE_PATH = "/v1/ext/mcp";

/** The resource identifiers (absolute URLs, no trailing slash) for a server reachable at `origin`. */
export interface OAuthResources {
  /** The issuer: the server's public origin, e.g. `https://stageline.example.com` (no path, no trailing slash). */
  issuer: string;
  rest: string;
  mcp: string;
}

/**
 * The resource identifiers of a server whose public origin is `origin` (PUBLIC_URL, or the URL it listens on).
 * @param origin an absolute http(s) URL; anything after the origin (path, query) is ignored.
 * @throws TypeError when `origin` is not an absolute URL.
 */
export function oauthResources(origin: string): OAuthResources {
  const issuer = new URL(origin).origin;
  return { issuer, rest: issuer + REST_RESOURCE_PATH, mcp: issuer + MCP_RESOURCE_PATH };
}

/** Which resource a request path belongs to: `mcp` for `/v1/ext/mcp` (and below), `rest` for the rest of `/v1/ext`. */
export function resourceOfPath(path: string): "rest" | "mcp" {
  return path === MCP_RESOURCE_PATH || path.startsWith(MCP_RESOURCE_PATH + "/") ? "mcp" : "rest";
}

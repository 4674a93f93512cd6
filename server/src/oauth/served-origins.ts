/**
 * The origins the server answers as for OAuth: the issuer and the base of the resource identifiers (CONTRACT
 * "Connect with OAuth 2.1": "In development mode the issuer and resource identifiers follow the loopback host the
 * client used (`localhost` or `127.0.0.1`), so a client given either URL completes discovery; `PUBLIC_URL` fixes them
 * in production"; issue 39 item 6). MCP clients check that the Protected Resource Metadata names the very URL they
 * were given (RFC 9728 §3.3) and that the authorization server's metadata names the issuer they fetched it from
 * (RFC 8414 §3.3), so a server that always said `127.0.0.1` failed every client given `localhost`.
 * The policy:
 * - `PUBLIC_URL` set, or production mode: one origin, `ctx.publicOrigin()` (PUBLIC_URL, else the URL it listens on).
 * - Development and test mode without `PUBLIC_URL`, listening on a loopback name (`127.0.0.1` or `localhost`): two,
 *   the listening origin first and the other loopback name with the same port. A request's origin is the one whose
 *   `host:port` is its `Host` header; any other `Host` (another port, a rebinding name) gets the first. The header
 *   only ever picks one of these two fixed strings: nothing of it is copied into an answer.
 * Tokens name one of them as their resource (`aud`); the resource side accepts either name for the same resource
 * (`resourceIdentifiers`), since both reach this one server.
 */
import type { AppContext } from "../context";
import { oauthResources, type OAuthResources } from "./resources";

/** The loopback names a development server answers as, each the other's alias. */
const LOOPBACK_ALIASES: Record<string, string> = { "127.0.0.1": "localhost", localhost: "127.0.0.1" };

/** The served origins of one server, computed once per public origin (it is fixed once the server listens). */
export interface ServedOrigins {
  /** Every served origin, the default (`ctx.publicOrigin()`) first; one or two entries. */
  origins: readonly string[];
  /** Each origin's resources (oauth/resources.ts), in the order of `origins`. */
  resources: readonly OAuthResources[];
  /** `host:port` (lower case, as a `Host` header names it) to the index in `origins`. */
  byHost: ReadonlyMap<string, number>;
}

let cached: { key: string; served: ServedOrigins } | undefined;

/**
 * The origins `ctx`'s server answers as (see the module comment).
 * @throws Error when called before the server listens and PUBLIC_URL is unset (`ctx.publicOrigin()`).
 */
export function servedOrigins(ctx: Pick<AppContext, "config" | "publicOrigin">): ServedOrigins {
  const primary = ctx.publicOrigin();
  const follow = ctx.config.publicUrl === undefined && ctx.config.mode !== "production";
  const key = `${follow ? "follow" : "fixed"} ${primary}`;
  if (cached?.key !== key) cached = { key, served: computeServedOrigins(primary, follow) };
  return cached.served;
}

/**
 * The served origins for a server whose default origin is `primary` (an absolute http(s) URL), following the loopback
 * host when `followLoopbackHost` (development and test mode without PUBLIC_URL).
 */
export function computeServedOrigins(primary: string, followLoopbackHost: boolean): ServedOrigins {
  const url = new URL(primary);
  const origins = [url.origin];
  const alias = LOOPBACK_ALIASES[url.hostname];
  if (followLoopbackHost && url.protocol === "http:" && alias !== undefined) origins.push(`http://${alias}${url.port ? `:${url.port}` : ""}`);
  return {
    origins,
    resources: origins.map(oauthResources),
    byHost: new Map(origins.map((origin, i) => [new URL(origin).host, i])),
  };
}

/** The index in `served.origins` of the origin a request with `Host` header `host` addressed (0 when none matches). */
function indexForHost(served: ServedOrigins, host: string | undefined): number {
  return (host !== undefined && served.byHost.get(host.toLowerCase())) || 0;
}

/** The origin a request addressed: the served origin its `Host` header names, else the default. */
export function originForHost(served: ServedOrigins, host: string | undefined): string {
  return served.origins[indexForHost(served, host)]!;
}

/** The resources (issuer, REST API, MCP endpoint) of the origin a request with `Host` header `host` addressed. */
export function resourcesForHost(served: ServedOrigins, host: string | undefined): OAuthResources {
  return served.resources[indexForHost(served, host)]!;
}

/**
 * Every identifier of resource `kind` on this server, the one at the origin the request addressed first: what an
 * access token's `aud` may be to be used there (a token issued through `localhost` is good at `127.0.0.1`, for the
 * same resource only).
 */
export function resourceIdentifiers(served: ServedOrigins, host: string | undefined, kind: "rest" | "mcp"): string[] {
  const first = resourcesForHost(served, host)[kind];
  return [first, ...served.resources.map((r) => r[kind]).filter((r) => r !== first)];
}

/**
 * Which credential a `/v1/ext` request presents, and the `WWW-Authenticate` challenges its 401 and 403 answers carry
 * (issue 32; CONTRACT "Connect with OAuth 2.1" and "MCP server"; RFC 6750 §3, RFC 9728 §5.1, MCP 2026-07-28
 * "Authorization"). The policy:
 * - `x-api-key`, or `Authorization: Bearer` with an API key (`sl_<prefix>_<secret>`): the API-key path. Such a
 *   request is never sent into OAuth discovery: its 401 has no `resource_metadata` (the MCP endpoint's challenge as
 *   before, the REST API none, as before) and its 403 no challenge.
 * - Any other `Authorization: Bearer` value: an OAuth access token. Its 401 is
 *   `Bearer error="invalid_token", error_description="<why>", resource_metadata="<PRM URL>"`, the description saying
 *   whether it expired, was issued for the other resource, or is unknown (services/oauth-tokens.ts
 *   `AccessTokenRejected`; issue 39); its 403 (a missing scope)
 *   `Bearer error="insufficient_scope", scope="<needed>", resource_metadata="<PRM URL>"`, the scope being the
 *   first scope that would do (only the needed one, as MCP 2026-07-28 asks, not the token's own).
 * - No credential: 401 with `Bearer resource_metadata="<PRM URL>", scope="<the five API scopes>"`.
 * The PRM URL is the resource's Protected Resource Metadata (RFC 9728 §3.1: `/.well-known/oauth-protected-resource`
 * inserted before the resource's path): `.../v1/ext/mcp` for the MCP endpoint, `.../v1/ext` for the REST API, at the
 * origin the request addressed (oauth/served-origins.ts: in development `localhost` or `127.0.0.1`).
 */
import type { Request } from "express";
import { API_KEY_HEADER, SCOPES, type Scope } from "@stageline/shared";
import { resourceOfPath, type OAuthResources } from "../oauth/resources";
import { resourceIdentifiers, resourcesForHost, type ServedOrigins } from "../oauth/served-origins";

/** The well-known path prefix of Protected Resource Metadata (RFC 9728 §3). */
export const PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource";

/** An API key as `Authorization: Bearer` carries it (services/api-keys.ts `generateApiKey`: `sl_<prefix>_<secret>`). */
const API_KEY_FORMAT = /^sl_[A-Za-z0-9]+_\S+$/;
const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** What a request presents: an API key, an OAuth access token, or nothing. */
export type PresentedCredential = { kind: "key"; value: string } | { kind: "token"; value: string } | { kind: "none" };

/** The credential of a request (see the module comment for the rules). */
export function presentedCredential(req: Request): PresentedCredential {
  const key = req.header(API_KEY_HEADER);
  if (key !== undefined) return { kind: "key", value: key };
  const bearer = BEARER.exec(req.header("authorization") ?? "")?.[1];
  if (bearer === undefined) return { kind: "none" };
  return API_KEY_FORMAT.test(bearer) ? { kind: "key", value: bearer } : { kind: "token", value: bearer };
}

/** The request's path without its query (`/v1/ext/items`). */
function pathOf(req: Request): string {
  const url = req.originalUrl;
  const q = url.indexOf("?");
  return q < 0 ? url : url.slice(0, q);
}

/** The resource the request is for (oauth/resources.ts `resourceOfPath`): `rest` or `mcp`. */
export function resourceKindOf(req: Request): "rest" | "mcp" {
  return resourceOfPath(pathOf(req));
}

/**
 * The identifiers an access token's `aud` may be for the request (its resource, at every served origin, the one it
 * addressed first: oauth/served-origins.ts `resourceIdentifiers`).
 */
export function acceptedResources(req: Request, served: ServedOrigins): string[] {
  return resourceIdentifiers(served, req.header("host"), resourceKindOf(req));
}

/** The Protected Resource Metadata URL of a resource (RFC 9728 §3.1). */
export function metadataUrlOf(resources: OAuthResources, kind: "rest" | "mcp"): string {
  return resources.issuer + PRM_WELL_KNOWN + new URL(resources[kind]).pathname;
}

function quoted(value: string): string {
  return `"${value.replace(/["\\]/g, "\\$&")}"`;
}

/** Longest `error_description` sent (it names at most two resource URLs). */
const MAX_DESCRIPTION_CHARS = 500;

/**
 * An `error_description` value: RFC 6750 §3 allows printable ASCII but the double quote and the backslash; anything
 * else (a stored `aud` is the server's own URL, but is not trusted blindly) becomes `?`, and the text is bounded.
 */
function description(text: string): string {
  return `"${text.slice(0, MAX_DESCRIPTION_CHARS).replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, "?")}"`;
}

/** The MCP endpoint's challenge for an API key (unchanged from before issue 32: no OAuth discovery). */
const API_KEY_MCP_CHALLENGE =
  'Bearer realm="Stageline", error="invalid_token", error_description="Send your Stageline API key as x-api-key or Authorization: Bearer."';

/**
 * The `WWW-Authenticate` value of a 401 for `req` on a server answering as `served`, or null for none (an API key on
 * the REST API, as before).
 * @param tokenDescription for a refused access token, why (services/oauth-tokens.ts `AccessTokenRejected.description`).
 */
export function challengeFor401(req: Request, served: ServedOrigins, tokenDescription?: string): string | null {
  const presented = presentedCredential(req);
  const kind = resourceKindOf(req);
  if (presented.kind === "key") return kind === "mcp" ? API_KEY_MCP_CHALLENGE : null;
  const metadata = metadataUrlOf(resourcesForHost(served, req.header("host")), kind);
  if (presented.kind === "token") {
    const why = description(tokenDescription ?? "The access token is not valid.");
    return `Bearer error="invalid_token", error_description=${why}, resource_metadata=${quoted(metadata)}`;
  }
  return `Bearer resource_metadata=${quoted(metadata)}, scope=${quoted(SCOPES.join(" "))}`;
}

/**
 * The `WWW-Authenticate` value of a 403 `insufficient_scope` for `req` whose endpoint needs one of `anyOf`, or null
 * when the request did not present an access token (API keys get the problem body alone, as before).
 */
export function challengeFor403(req: Request, served: ServedOrigins, anyOf: readonly Scope[]): string | null {
  if (presentedCredential(req).kind !== "token" || anyOf.length === 0) return null;
  const metadata = metadataUrlOf(resourcesForHost(served, req.header("host")), resourceKindOf(req));
  return `Bearer error="insufficient_scope", scope=${quoted(anyOf[0]!)}, resource_metadata=${quoted(metadata)}`;
}

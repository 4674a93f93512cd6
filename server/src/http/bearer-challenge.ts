/**
 * Which credential a `/v1/ext` request presents, and the `WWW-Authenticate` challenges its 401 and 403 answers carry
 * (issue 32; CONTRACT "Connect with OAuth 2.1" and "MCP server"; RFC 6750 §3, RFC 9728 §5.1, MCP 2026-07-28
 * "Authorization"). The policy:
 * - `x-api-key`, or `Authorization: Bearer` with an API key (`sl_<prefix>_<secret>`): the API-key path. Such a
 *   request is never sent into OAuth discovery: its 401 has no `resource_metadata` (the MCP endpoint's challenge as
 *   before, the REST API none, as before) and its 403 no challenge.
 * - Any other `Authorization: Bearer` value: an OAuth access token. Its 401 is
 *   `Bearer error="invalid_token", error_description="...", resource_metadata="<PRM URL>"`; its 403 (a missing scope)
 *   `Bearer error="insufficient_scope", scope="<needed>", resource_metadata="<PRM URL>"`, the scope being the
 *   first scope that would do (only the needed one, as MCP 2026-07-28 asks, not the token's own).
 * - No credential: 401 with `Bearer resource_metadata="<PRM URL>", scope="<the five API scopes>"`.
 * The PRM URL is the resource's Protected Resource Metadata (RFC 9728 §3.1: `/.well-known/oauth-protected-resource`
 * inserted before the resource's path): `.../v1/ext/mcp` for the MCP endpoint, `.../v1/ext` for the REST API.
 */
import type { Request } from "express";
import { API_KEY_HEADER, SCOPES, type Scope } from "@stageline/shared";
import { oauthResources, resourceOfPath, type OAuthResources } from "../oauth/resources";

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

/** The last origin's resources (an origin is fixed once the server listens: no URL parsing per request). */
let cached: { origin: string; resources: OAuthResources } | undefined;

/** `oauthResources(origin)`, computed once per origin. */
function resourcesOf(origin: string): OAuthResources {
  if (cached?.origin !== origin) cached = { origin, resources: oauthResources(origin) };
  return cached.resources;
}

/** The absolute resource identifier of the request's resource on a server whose public origin is `origin`. */
export function resourceOf(req: Request, origin: string): string {
  return resourcesOf(origin)[resourceKindOf(req)];
}

/** The Protected Resource Metadata URL of a resource (RFC 9728 §3.1). */
export function metadataUrlOf(resources: OAuthResources, kind: "rest" | "mcp"): string {
  return resources.issuer + PRM_WELL_KNOWN + new URL(resources[kind]).pathname;
}

function quoted(value: string): string {
  return `"${value.replace(/["\\]/g, "\\$&")}"`;
}

/** The MCP endpoint's challenge for an API key (unchanged from before issue 32: no OAuth discovery). */
const API_KEY_MCP_CHALLENGE =
  'Bearer realm="Stageline", error="invalid_token", error_description="Send your Stageline API key as x-api-key or Authorization: Bearer."';

/**
 * The `WWW-Authenticate` value of a 401 for `req` (server public origin `origin`), or null for none (an API key on
 * the REST API, as before).
 */
export function challengeFor401(req: Request, origin: string): string | null {
  const presented = presentedCredential(req);
  const kind = resourceKindOf(req);
  if (presented.kind === "key") return kind === "mcp" ? API_KEY_MCP_CHALLENGE : null;
  const metadata = metadataUrlOf(resourcesOf(origin), kind);
  if (presented.kind === "token") {
    return `Bearer error="invalid_token", error_description="The access token is invalid or expired.", resource_metadata=${quoted(metadata)}`;
  }
  return `Bearer resource_metadata=${quoted(metadata)}, scope=${quoted(SCOPES.join(" "))}`;
}

/**
 * The `WWW-Authenticate` value of a 403 `insufficient_scope` for `req` whose endpoint needs one of `anyOf`, or null
 * when the request did not present an access token (API keys get the problem body alone, as before).
 */
export function challengeFor403(req: Request, origin: string, anyOf: readonly Scope[]): string | null {
  if (presentedCredential(req).kind !== "token" || anyOf.length === 0) return null;
  const metadata = metadataUrlOf(resourcesOf(origin), resourceKindOf(req));
  return `Bearer error="insufficient_scope", scope=${quoted(anyOf[0]!)}, resource_metadata=${quoted(metadata)}`;
}

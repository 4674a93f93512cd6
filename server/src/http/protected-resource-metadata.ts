/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728; MCP 2026-07-28 "Authorization"; issue 32) of Stageline's two
 * protected resources (oauth/resources.ts), at the well-known URLs RFC 9728 §3.1 derives from their identifiers:
 * `GET /.well-known/oauth-protected-resource/v1/ext/mcp` (the MCP endpoint) and
 * `GET /.well-known/oauth-protected-resource/v1/ext` (the REST API). Public (no credential, not rate-limited), JSON:
 * `{ resource, authorization_servers: [issuer], scopes_supported: the five API scopes, bearer_methods_supported:
 * ["header"], resource_name }`. The authorization server's own metadata (RFC 8414) is served by the authorization
 * server, not here.
 */
import { Router } from "express";
import { SCOPES } from "@stageline/shared";
import type { AppContext } from "../context";
import type { OAuthResources } from "../oauth/resources";
import { resourcesForHost, servedOrigins } from "../oauth/served-origins";
import { PRM_WELL_KNOWN } from "./bearer-challenge";

/** RFC 9728 §2: the metadata of one protected resource. */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported: string[];
  bearer_methods_supported: ["header"];
  resource_name: string;
}

/** The metadata of resource `kind` at the origin whose resources are `resources` (oauth/resources.ts). */
export function protectedResourceMetadata(resources: OAuthResources, kind: "rest" | "mcp"): ProtectedResourceMetadata {
  return {
    resource: resources[kind],
    authorization_servers: [resources.issuer],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ["header"],
    resource_name: kind === "mcp" ? "Stageline MCP server" : "Stageline API",
  };
}

/**
 * The two well-known routes (GET and HEAD; any other method is 405 with `Allow`), at the origin the request addressed
 * (oauth/served-origins.ts: in development `localhost` or `127.0.0.1`, so `resource` is the URL the client was given).
 */
export function protectedResourceMetadataRouter(ctx: Pick<AppContext, "config" | "publicOrigin">): Router {
  const router = Router();
  for (const [path, kind] of [
    [`${PRM_WELL_KNOWN}/v1/ext/mcp`, "mcp"],
    [`${PRM_WELL_KNOWN}/v1/ext`, "rest"],
  ] as const) {
    router.get(path, (req, res) => {
      res.set("Cache-Control", "public, max-age=300").set("Access-Control-Allow-Origin", "*");
      res.json(protectedResourceMetadata(resourcesForHost(servedOrigins(ctx), req.header("host")), kind));
    });
    router.all(path, (_req, res) => {
      res.set("Allow", "GET, HEAD").status(405).end();
    });
  }
  return router;
}

/**
 * The authorization server's HTTP edge: oidc-provider under `/oauth` (built on the first request: provider.ts) and
 * the RFC 8414 metadata at `/.well-known/oauth-authorization-server` at the origin (the issuer has no path, so that is
 * also the path-insertion form MCP clients derive). The console serves the interaction pages (console/pages/oauth.ts).
 * Both answer as the origin the request addressed (served-origins.ts: in development `localhost` or `127.0.0.1`, each
 * with its own provider), so a client given either URL finds the issuer it expects.
 */
import { Router, type RequestHandler } from "express";
import type { AppContext } from "../context";
import { oauthEndpointLimiters } from "./endpoint-limits";
import { oauthOutageHandler } from "./outage";
import { oauthPageSecurity } from "./page-security";
import { OAUTH_MOUNT, oauthProvider } from "./provider";
import { oauthResources } from "./resources";
import { originForHost, servedOrigins } from "./served-origins";
import { OAUTH_SCOPES } from "./scope-policy";

/** Path of the RFC 8414 authorization server metadata. */
export const AS_METADATA_PATH = "/.well-known/oauth-authorization-server";

/**
 * The RFC 8414 metadata of the server at `origin`: the endpoints under `/oauth` and what they support (the same
 * values as oidc-provider's own discovery document at `/oauth/.well-known/openid-configuration`).
 */
export function authorizationServerMetadata(origin: string): Record<string, unknown> {
  const { issuer } = oauthResources(origin);
  const at = (path: string) => `${issuer}${OAUTH_MOUNT}${path}`;
  return {
    issuer,
    authorization_endpoint: at("/auth"),
    token_endpoint: at("/token"),
    registration_endpoint: at("/reg"),
    revocation_endpoint: at("/token/revocation"),
    jwks_uri: at("/jwks"),
    scopes_supported: OAUTH_SCOPES,
    response_types_supported: ["code"],
    // oidc-provider answers in every OAuth response mode it knows (query is the default for the code flow).
    response_modes_supported: ["form_post", "fragment", "query"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["none", "client_secret_basic", "client_secret_post"],
    revocation_endpoint_auth_methods_supported: ["none", "client_secret_basic", "client_secret_post"],
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: true,
  };
}

/**
 * The router for `/oauth` and the metadata document. Mount before any body parser (the provider reads its own).
 * The unauthenticated endpoints that write state are limited per client IP first (endpoint-limits.ts); every `/oauth`
 * answer carries the console's security headers (page-security.ts).
 */
export function oauthRouter(ctx: AppContext): Router {
  const router = Router();
  for (const limiter of oauthEndpointLimiters(ctx.prisma, ctx.config.oauthEndpointLimits)) {
    for (const method of limiter.methods) router[method](limiter.path, limiter.handler);
  }
  router.get(AS_METADATA_PATH, (req, res) => {
    res.set("access-control-allow-origin", "*").set("cache-control", "public, max-age=300");
    res.json(authorizationServerMetadata(originForHost(servedOrigins(ctx), req.header("host"))));
  });
  /** Each served origin's provider's Koa callback, made once. */
  const handlers = new Map<string, ReturnType<Awaited<ReturnType<typeof oauthProvider>>["callback"]>>();
  const mount: RequestHandler = async (req, res, next) => {
    try {
      const origin = originForHost(servedOrigins(ctx), req.header("host"));
      let handler = handlers.get(origin);
      if (!handler) handlers.set(origin, (handler = (await oauthProvider(ctx, origin)).callback()));
      // Koa believes X-Forwarded-* whenever `proxy` is on; Express knows which peers TRUST_PROXY trusts, so the
      // headers of any other peer are dropped before the provider reads them.
      const trusted = req.app.get("trust proxy fn") as (address: string, hop: number) => boolean;
      if (!trusted(req.socket.remoteAddress ?? "", 0)) {
        for (const h of ["x-forwarded-for", "x-forwarded-proto", "x-forwarded-host"]) delete req.headers[h];
      }
      handler(req, res);
    } catch (err) {
      next(err);
    }
  };
  router.use(OAUTH_MOUNT, oauthPageSecurity(), mount);
  // An outage met before the provider answered (its limiters' counters, building it): 503, in OAuth's form (outage.ts).
  router.use(OAUTH_MOUNT, oauthOutageHandler(ctx.logger));
  return router;
}

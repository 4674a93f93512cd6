/**
 * The OAuth 2.1 authorization server (CONTRACT "Connect with OAuth 2.1"; issue 32): oidc-provider 9 (an OpenID
 * Certified library, ESM, Koa inside) mounted under `/oauth`, its state in `oauth_records` (adapter.ts), its keys in
 * `server_secrets`. Built lazily on the first request, because the issuer (`ctx.publicOrigin()`) is known only once
 * the server listens. oidc-provider takes one issuer per Provider, so there is one per served origin
 * (served-origins.ts: one in production, `localhost` and `127.0.0.1` in development), each built on its origin's first
 * request, all sharing the adapter (`oauth_records`), the keys and the cookie secret: a client registered, a grant
 * given or a token issued through one is the same record for the other. What is on: authorization code + PKCE S256 (required for every client), rotating refresh tokens
 * (a reused one revokes its grant: oidc-provider's refresh_token grant), resource indicators (RFC 8707: opaque
 * 1-hour access tokens bound to one of oauth/resources.ts), `iss` in the authorization response (RFC 9207),
 * revocation (RFC 7009), Dynamic Client Registration (RFC 7591), Client ID Metadata Documents. Off: implicit, hybrid,
 * id_token responses, device flow, introspection, userinfo, logout endpoint, PAR, DPoP, devInteractions.
 */
import { generateKeyPairSync, randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AppContext } from "../context";
import { findUser } from "../db/users";
import { getOrCreateSecret } from "../db/server-secrets";
import { SCOPES } from "@stageline/shared";
import { oauthAdapterClass, sha256b64u } from "./adapter";
import { importEsm } from "./esm";
import { metadataDocumentFeature } from "./metadata-document-policy";
import { guardedMetadataFetch } from "./metadata-fetch";
import { markOutage, outageMiddleware, type KoaAnswer } from "./outage";
import { formPostFormAction } from "./page-security";
import { oauthResources } from "./resources";
import { servedOrigins } from "./served-origins";
import { checkRedirectUris } from "../services/redirect-uri-policy";
import { expiresWithSession, issueRefreshToken } from "./refresh-policy";
import { registrationScopeMiddleware } from "./registration-scope";

/** Where the provider is mounted. */
export const OAUTH_MOUNT = "/oauth";
/** Access token lifetime (CONTRACT: 1 hour), seconds. */
export const ACCESS_TOKEN_TTL = 3600;
/** Refresh token lifetime, seconds (30 days; every use rotates it). */
export const REFRESH_TOKEN_TTL = 30 * 24 * 3600;
/** The console's interaction (sign-in and consent) page for interaction `uid`. */
export const interactionPath = (uid: string) => `/console/oauth/interaction/${encodeURIComponent(uid)}`;

/** The parts of oidc-provider's Provider this server uses (the package ships no types). */
export interface OAuthProvider {
  proxy: boolean;
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
  interactionFinished(req: IncomingMessage, res: ServerResponse, result: object, options?: { mergeWithLastSubmission?: boolean }): Promise<void>;
  interactionResult(req: IncomingMessage, res: ServerResponse, result: object, options?: { mergeWithLastSubmission?: boolean }): Promise<string>;
  Client: { find(id: string): Promise<OAuthClient | undefined>; prototype: { compareClientSecret(actual: string): unknown } };
  Grant: GrantClass;
  Session: { findByUid(uid: string): Promise<{ destroy(): Promise<void> } | undefined> };
  on(event: string, listener: (...args: unknown[]) => void): void;
  use(middleware: (c: KoaContext, next: () => Promise<void>) => Promise<void>): void;
}

/** The part of Koa's request context the middlewares here use. */
export interface KoaContext extends KoaAnswer {
  method: string;
  path: string;
  query: Record<string, unknown>;
  req: IncomingMessage & { body?: unknown };
  is(type: string): string | false | null;
  /** oidc-provider's request state (its parameters once parsed). */
  oidc?: { params?: Record<string, unknown> };
  response: { get(field: string): string };
  set(field: string, value: string): void;
}

/** An oidc-provider Client (the metadata used here). */
export interface OAuthClient {
  clientId: string;
  clientName?: string;
  redirectUris: string[];
  grantTypeAllowed(type: string): boolean;
  metadata(): Record<string, unknown>;
}

/** An oidc-provider Grant. */
export interface OAuthGrant {
  jti: string;
  accountId: string;
  clientId: string;
  getOIDCScope(): string;
  addOIDCScope(scope: string): void;
  rejectOIDCScope(scope: string): void;
  /** What the person rejected (oidc-provider's grant payload). */
  rejected?: { openid?: { scope?: string } };
  addResourceScope(resource: string, scope: string): void;
  rejectResourceScope(resource: string, scope: string): void;
  save(): Promise<string>;
}
interface GrantClass {
  new (init: { accountId: string; clientId: string }): OAuthGrant;
  find(id: string): Promise<OAuthGrant | undefined>;
}

/** What `interactionDetails` gives for the console's interaction page. */
export interface InteractionDetails {
  uid: string;
  params: Record<string, string | undefined>;
  prompt: { name: string; reasons: string[]; details: { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> } };
  session?: { accountId?: string; uid?: string };
  grantId?: string;
  /** Expiry, epoch seconds. */
  exp?: number;
  save(ttlSeconds: number): Promise<string>;
}

type PromptPolicy = { get(name: string): { checks: { push(check: unknown): void } } };
interface OidcProviderModule {
  default: new (issuer: string, config: object) => OAuthProvider;
  errors: Record<string, new (msg: string) => Error>;
  interactionPolicy: {
    base(): PromptPolicy;
    Check: (new (reason: string, description: string, check: (c: { oidc: { result?: { login?: unknown } } }) => boolean) => unknown) & { REQUEST_PROMPT: boolean; NO_NEED_TO_PROMPT: boolean };
  };
}

/**
 * oidc-provider's default prompts plus one rule: every authorization request goes through the console's interaction
 * page, which finishes the login step with the console's signed-in user. The provider's own session cookie alone
 * never issues a code: after a console sign-out, or with another user signed in on the same browser, the request
 * goes back to the console (which asks to sign in, or answers as the user now signed in).
 */
function consoleConfirmedPolicy(ip: OidcProviderModule["interactionPolicy"]): PromptPolicy {
  const policy = ip.base();
  policy.get("login").checks.push(
    new ip.Check("console_confirmation", "the console's signed-in user confirms every authorization", (c) =>
      c.oidc.result?.login ? ip.Check.NO_NEED_TO_PROMPT : ip.Check.REQUEST_PROMPT,
    ),
  );
  return policy;
}

/** Each context's providers, by issuer origin. */
const providers = new WeakMap<AppContext, Map<string, Promise<OAuthProvider>>>();

/**
 * The authorization server of `ctx` whose issuer is `origin` (one of served-origins.ts `servedOrigins(ctx).origins`;
 * the default one when omitted), built on first use (after listen, when `ctx.publicOrigin()` is known) and shared by
 * every later caller.
 * @throws Error when `origin` is not a served origin; what building it threw (the next call tries again).
 */
export function oauthProvider(ctx: AppContext, origin?: string): Promise<OAuthProvider> {
  const served = servedOrigins(ctx);
  const issuer = origin ?? served.origins[0]!;
  if (!served.origins.includes(issuer)) return Promise.reject(new Error(`${issuer} is not an origin this server answers as`));
  let byOrigin = providers.get(ctx);
  if (!byOrigin) providers.set(ctx, (byOrigin = new Map()));
  let p = byOrigin.get(issuer);
  if (!p) {
    const building = buildProvider(ctx, issuer);
    byOrigin.set(issuer, (p = building));
    building.catch(() => byOrigin.delete(issuer));
  }
  return p;
}

/** An EC P-256 private JWK, generated once per database and kept in `server_secrets` (never in files). */
async function signingKey(ctx: AppContext): Promise<object> {
  const candidate = JSON.stringify({ ...generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ format: "jwk" }), use: "sig", alg: "ES256" });
  return JSON.parse(await getOrCreateSecret(ctx.prisma, "oauth_signing_jwk", candidate)) as object;
}

/**
 * Builds the provider whose issuer is `origin`. It issues tokens for the resources of any served origin (a token's
 * `aud` names the same server either way, and a grant given through one origin can be refreshed through the other),
 * and a request that names no `resource` gets its own origin's REST API.
 */
async function buildProvider(ctx: AppContext, origin: string): Promise<OAuthProvider> {
  const { default: Provider, errors, interactionPolicy } = await importEsm<OidcProviderModule>("oidc-provider");
  const resources = oauthResources(origin);
  const known = new Set(servedOrigins(ctx).resources.flatMap((r) => [r.rest, r.mcp]));
  const cookieKey = await getOrCreateSecret(ctx.prisma, "oauth_cookie_key", randomBytes(32).toString("base64url"));
  const jwk = await signingKey(ctx);
  const apiScopes = SCOPES.join(" ");

  const provider = new Provider(resources.issuer, {
    adapter: oauthAdapterClass(ctx.db.sql, errors.InvalidGrant!),
    clients: [],
    jwks: { keys: [jwk] },
    cookies: { keys: [cookieKey], long: { signed: true }, short: { signed: true } },
    responseTypes: ["code"],
    scopes: ["offline_access"],
    claims: { openid: ["sub"] },
    pkce: { required: () => true },
    clientAuthMethods: ["none", "client_secret_basic", "client_secret_post"],
    clientDefaults: { grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "client_secret_basic", id_token_signed_response_alg: "ES256" },
    rotateRefreshToken: true,
    // A refresh token once the person consented on the consent page, asked for or not (refresh-policy.ts).
    issueRefreshToken,
    expiresWithSession,
    // Opaque tokens only: nothing signed leaves the server except what oidc-provider signs for its own cookies.
    ttl: {
      AccessToken: ACCESS_TOKEN_TTL,
      AuthorizationCode: 60,
      RefreshToken: REFRESH_TOKEN_TTL,
      Grant: REFRESH_TOKEN_TTL,
      Interaction: 600,
      Session: 24 * 3600,
      ClientCredentials: 600,
    },
    async findAccount(_c: unknown, id: string) {
      const user = await findUser(ctx.prisma, id);
      return user ? { accountId: user.id, claims: async () => ({ sub: user.id }) } : undefined;
    },
    interactions: { policy: consoleConfirmedPolicy(interactionPolicy), url: (_c: unknown, interaction: { uid: string }) => interactionPath(interaction.uid) },
    extraClientMetadata: {
      properties: ["stageline_owner"],
      validator(_c: unknown, key: string, value: unknown, metadata: Record<string, unknown>) {
        if (key !== "stageline_owner") return;
        if (value !== undefined && typeof value !== "boolean") throw new errors.InvalidClientMetadata!("stageline_owner must be a boolean");
        // The reason starts with `redirect_uris`: InvalidClientMetadata answers `invalid_redirect_uri` with it as the
        // `error_description` (RFC 7591 section 3.2.2); InvalidRedirectUri would drop it for a generic text.
        const problem = checkRedirectUris(metadata.redirect_uris);
        if (problem) throw new errors.InvalidClientMetadata!(problem);
      },
    },
    fetch: guardedMetadataFetch({ production: ctx.config.mode === "production", ca: ctx.config.oauthMetadataCa }),
    fetchResponseBodyLimits: { "client_id metadata document": 16 * 1024 },
    features: {
      devInteractions: { enabled: false },
      introspection: { enabled: false },
      userinfo: { enabled: false },
      deviceFlow: { enabled: false },
      // Not in the contract, so not offered: logout endpoint, pushed authorization requests, DPoP-bound tokens (the
      // resource side checks bearer tokens only: oauth-storage.md).
      rpInitiatedLogout: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      dPoP: { enabled: false },
      revocation: { enabled: true },
      registration: { enabled: true, initialAccessToken: false },
      clientIdMetadataDocument: metadataDocumentFeature(errors.InvalidClient!),
      resourceIndicators: {
        enabled: true,
        // A request without `resource` gets a token for the REST API (never one for a userinfo endpoint: off).
        defaultResource: () => resources.rest,
        useGrantedResource: () => true,
        getResourceServerInfo(_c: unknown, indicator: string) {
          if (!known.has(indicator)) throw new errors.InvalidTarget!("unknown resource");
          return { scope: apiScopes, audience: indicator, accessTokenTTL: ACCESS_TOKEN_TTL, accessTokenFormat: "opaque" };
        },
      },
    },
    // oidc-provider's own error pages (e.g. a redirect_uri that does not match) render a plain page, never redirect.
    async renderError(c: { type: string; body: string; status: number }, out: { error: string; error_description?: string }) {
      c.type = "html";
      const esc = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
      c.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Authorization error</title></head><body><main><h1>Authorization error</h1><p>${esc(out.error)}</p><p>${esc(out.error_description ?? "")}</p></main></body></html>`;
    },
  });
  // Behind TRUST_PROXY the provider reads X-Forwarded-Proto (secure cookies) like Express does; router.ts drops
  // those headers from peers TRUST_PROXY does not trust.
  const proxy = ctx.config.trustProxy;
  provider.proxy = proxy !== false && proxy !== 0 && proxy !== "";
  // Client secrets are stored as their SHA-256 (docs/oauth-storage.md): the adapter hands the hash back as
  // `client_secret`, and a presented secret is hashed before the constant-time comparison.
  const compare = provider.Client.prototype.compareClientSecret;
  provider.Client.prototype.compareClientSecret = function (actual: string) {
    return compare.call(this, sha256b64u(String(actual)));
  };
  // First, so outermost: a database that cannot be reached is 503 with Retry-After, not the provider's 500 (outage.ts).
  provider.use(outageMiddleware(ctx.logger));
  // An authorization request that names no scope asks for every API scope (the consent page then offers them all,
  // ticked as far as the user's role allows): MCP clients may omit `scope` when they know none.
  // (Koa sees the path below the Express mount.)
  provider.use(async (c, next) => {
    if (c.method === "GET" && c.path === "/auth" && !c.query.scope) c.query = { ...c.query, scope: apiScopes };
    await next();
  });
  // MCP clients register with their API scopes as `scope`, which oidc-provider would refuse (registration-scope.ts).
  provider.use(registrationScopeMiddleware);
  // The console's `form-action 'self'` (page-security.ts) widened to the redirect URI's origin on a form_post page.
  provider.use(formPostFormAction);
  provider.on("server_error", (c: unknown, err: unknown) => {
    if (!markOutage(c as object, err)) ctx.logger.error({ err }, "oauth server error");
  });
  return provider;
}

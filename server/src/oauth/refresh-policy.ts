/**
 * When the authorization server issues a refresh token (CONTRACT "Connect with OAuth 2.1", refresh tokens; OAuth 2.1
 * section 4.3; MCP's guidance for OIDC-flavoured authorization servers, SEP-2207): a client registered with the
 * `refresh_token` grant gets one once the person has consented on the console's consent page, whether or not the
 * authorization request asked `offline_access` or sent `prompt=consent`. oidc-provider's default needs both (it drops
 * `offline_access` from a request without `prompt=consent`, OpenID Connect Core section 11), and the MCP TypeScript
 * SDK 1.x sends neither: it asks only the API scopes named in `WWW-Authenticate`.
 *
 * How: the consent page offers `offline_access` to every such client (ticked, and the person may untick it), and the
 * grant records it as consented; a code issued under a grant that holds it yields a refresh token, and its tokens do
 * not end with the provider's browser session. Protected Resource Metadata and `WWW-Authenticate` are untouched
 * (API scopes only).
 */

/** The scope a grant holds when its person consented to refresh tokens. */
export const OFFLINE_ACCESS = "offline_access";

/** The part of an oidc-provider Client this policy reads. */
export interface RefreshCapableClient {
  /** True when the client's registered `grant_types` include `type`. */
  grantTypeAllowed(type: string): boolean;
}

/** The part of an oidc-provider Grant this policy reads. */
export interface ConsentedGrant {
  /** The OpenID scopes granted and not rejected, space-separated. */
  getOIDCScope(): string;
}

/** True when the consent page offers `offline_access` to `client`: it is registered with the `refresh_token` grant. */
export function offersRefresh(client: RefreshCapableClient): boolean {
  return client.grantTypeAllowed("refresh_token");
}

/** True when `grant` records the person's consent to refresh tokens (`offline_access` granted, not rejected). */
export function grantAllowsRefresh(grant: ConsentedGrant | undefined): boolean {
  return Boolean(grant?.getOIDCScope().split(" ").includes(OFFLINE_ACCESS));
}

/** The part of oidc-provider's request context the hooks below read (`ctx.oidc.grant`: the grant being used). */
interface ProviderContext {
  oidc: { grant?: ConsentedGrant; client?: RefreshCapableClient };
}

/**
 * oidc-provider's `issueRefreshToken(ctx, client, code)` hook: at the token endpoint, for an authorization code, true
 * when the client may use refresh tokens and the code's grant holds the person's consent to them.
 */
export async function issueRefreshToken(ctx: ProviderContext, client: RefreshCapableClient): Promise<boolean> {
  return offersRefresh(client) && grantAllowsRefresh(ctx.oidc.grant);
}

/**
 * oidc-provider's `expiresWithSession(ctx, code)` hook: tokens from a grant with refresh consent outlive the
 * provider's browser session (24 hours, or a console account switch); the others end with it, as by default.
 */
export async function expiresWithSession(ctx: ProviderContext): Promise<boolean> {
  const client = ctx.oidc.client;
  return !(client && offersRefresh(client) && grantAllowsRefresh(ctx.oidc.grant));
}

/**
 * An MCP client's OAuth state kept in memory, for the official MCP TypeScript SDK's `OAuthClientProvider` (2.x types;
 * the 1.x interface has the same members): what a real MCP host persists between the redirect and the callback.
 * `authorizationUrl` is where the SDK sent the user agent (the test's browser goes there). A public client (PKCE,
 * `token_endpoint_auth_method: none`) registered for the code and refresh_token grants; with `clientMetadataUrl`, the
 * SDK uses that Client ID Metadata Document URL as its client_id when the server supports it.
 */
import type { OAuthClientMetadata, OAuthClientProvider, OAuthDiscoveryState, StoredOAuthClientInformation, StoredOAuthTokens } from "@modelcontextprotocol/client";

export class MemoryOAuthProvider implements OAuthClientProvider {
  info?: StoredOAuthClientInformation;
  saved?: StoredOAuthTokens;
  verifier = "";
  discovery?: OAuthDiscoveryState;
  authorizationUrl?: URL;
  constructor(
    private readonly name: string,
    private readonly redirect: string,
    readonly clientMetadataUrl?: string,
  ) {}
  get redirectUrl(): string {
    return this.redirect;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: this.name, redirect_uris: [this.redirect], token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"], response_types: ["code"] };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: StoredOAuthClientInformation) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: StoredOAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery") {
    if (scope === "all" || scope === "tokens") this.saved = undefined;
    if (scope === "all" || scope === "client") this.info = undefined;
  }
}

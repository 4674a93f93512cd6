/**
 * OAuth access tokens for the client (CONTRACT "Connect with OAuth 2.1"; RFC 6750): every request carries
 * `Authorization: Bearer <token>`. When the server answers `401` with a `WWW-Authenticate: Bearer error="invalid_token"`
 * challenge (RFC 6750 3.1: expired, revoked or unknown token) and the caller gave a `refreshAccessToken` callback, the
 * token is renewed through it and the request sent again, once. Concurrent calls that fail with the same token share
 * one refresh; a call that failed with a token someone already replaced just retries with the new one.
 */

/** Renews the access token (e.g. with the refresh token, at the authorization server's token endpoint). */
export type RefreshAccessToken = () => string | Promise<string>;

/** The access token of one client and its renewal. */
export class BearerAuth {
  private token: string;
  private refreshing: Promise<void> | null = null;

  constructor(token: string, private readonly refresh: RefreshAccessToken | undefined) {
    this.token = token;
  }

  /** The token to send now. */
  get current(): string {
    return this.token;
  }

  /** Whether a refresh callback was given (without one, a 401 is final). */
  get canRefresh(): boolean {
    return this.refresh !== undefined;
  }

  /**
   * Makes sure the token that failed (`used`) is replaced: calls the refresh callback unless another call already
   * replaced `used` or is replacing it (then waits for that one).
   * @throws what the callback threw, or TypeError when it returned no non-empty string; the token stays as it was.
   */
  async renew(used: string): Promise<void> {
    if (this.token !== used && this.refreshing === null) return;
    if (this.refreshing === null) {
      this.refreshing = (async () => {
        const next = await this.refresh!();
        if (typeof next !== "string" || next === "") throw new TypeError("Stageline: `refreshAccessToken` must return a non-empty access token");
        this.token = next;
      })().finally(() => {
        this.refreshing = null;
      });
    }
    await this.refreshing;
  }
}

/**
 * Whether an answer says the access token itself is no good: status 401 with a Bearer challenge whose `error` is
 * `invalid_token` (RFC 6750 3.1). A 401 without it (e.g. an API key problem) or a 403 `insufficient_scope` is not.
 */
export function isInvalidTokenChallenge(response: Response): boolean {
  if (response.status !== 401) return false;
  const challenge = response.headers.get("www-authenticate") ?? "";
  return /\bBearer\b/i.test(challenge) && /\berror\s*=\s*"?invalid_token"?/i.test(challenge);
}

/**
 * OAuth access tokens for the client (CONTRACT "Connect with OAuth 2.1"; RFC 6750): every request carries
 * `Authorization: Bearer <token>`. When the server answers `401` with a `WWW-Authenticate: Bearer error="invalid_token"`
 * challenge (RFC 6750 3.1: expired, revoked or unknown token) and the caller gave a `refreshAccessToken` callback, the
 * token is renewed through it and the request sent again, once; never for a token issued for another resource
 * (`shouldRenewToken`). Concurrent calls that fail with the same token share
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
 * The value of auth-param `name` of a Bearer challenge (RFC 7235 §2.1: a token or a quoted string, `\` escapes), or
 * undefined when absent.
 */
export function challengeParam(challenge: string, name: string): string | undefined {
  const param = new RegExp(`(?:^|[\\s,])${name}\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|([^\\s,]+))`, "i").exec(challenge);
  if (!param) return undefined;
  return param[1] !== undefined ? param[1].replace(/\\(.)/g, "$1") : param[2];
}

/**
 * Whether an answer says the access token itself is no good: status 401 with a Bearer challenge whose `error` is
 * `invalid_token` (RFC 6750 3.1). A 401 without it (e.g. an API key problem) or a 403 `insufficient_scope` is not.
 */
export function isInvalidTokenChallenge(status: number, headers: Headers): boolean {
  if (status !== 401) return false;
  const challenge = headers.get("www-authenticate") ?? "";
  return /\bBearer\b/i.test(challenge) && challengeParam(challenge, "error")?.toLowerCase() === "invalid_token";
}

/**
 * Whether a failed call should renew its access token and be sent again: the server refused the token itself (an
 * `invalid_token` challenge), and not because it was issued for another resource (`token_error: "wrong_resource"`, RFC
 * 8707): a refresh gives a token for the same resource, so it would spend the refresh token for nothing. Expired and
 * unknown tokens are renewed (the server forgets an expired token's record minutes after it expires, so "unknown"
 * is also how a token expired long ago is answered).
 * @param body the parsed error body (anything).
 */
export function shouldRenewToken(status: number, headers: Headers, body: unknown): boolean {
  if (!isInvalidTokenChallenge(status, headers)) return false;
  const reason = body !== null && typeof body === "object" ? (body as { token_error?: unknown }).token_error : undefined;
  return reason !== "wrong_resource";
}

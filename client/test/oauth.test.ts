/**
 * OAuth access tokens in the client (CONTRACT "Connect with OAuth 2.1", "Client library"): `accessToken` instead of
 * `apiKey` (exactly one), sent as `Authorization: Bearer`; a `401` with `WWW-Authenticate: Bearer error="invalid_token"`
 * calls `refreshAccessToken()` once per failure (concurrent calls share one refresh) and repeats the request once,
 * unless the token was issued for another resource (issue 39); a refused token is an `AccessTokenError` saying why.
 * nock plays the server.
 */
import nock from "nock";
import { AccessTokenError, AuthenticationError, PermissionError, Stageline, type StagelineCredentials } from "../src";
import { challengeParam } from "../src/bearer-auth";
import { API_KEY, client, CREATE_BODY, item, ORIGIN, problem, useNock, useVirtualClock } from "./helpers/setup";

useNock();
useVirtualClock();

const INVALID = { "WWW-Authenticate": 'Bearer resource_metadata="https://stageline.test/.well-known/oauth-protected-resource/v1/ext", error="invalid_token", error_description="The access token expired"' };
const ME = { company: { id: "c1", name: "Acme" } };

/** The fake server, matching only requests that carry `Bearer <token>` and no API key. */
const withToken = (token: string) => nock(ORIGIN, { reqheaders: { authorization: `Bearer ${token}` }, badheaders: ["x-api-key"] });

const oauthClient = (credentials: StagelineCredentials) => client({ credentials });

describe("credentials", () => {
  it("sends the access token as a Bearer header and no x-api-key", async () => {
    withToken("at-1").get("/v1/ext/me").reply(200, ME);
    await expect(oauthClient({ accessToken: "at-1" }).me()).resolves.toEqual(ME);
  });

  it("takes exactly one of apiKey and accessToken", () => {
    const make = (options: object) => () => new Stageline({ baseUrl: ORIGIN, ...options } as ConstructorParameters<typeof Stageline>[0]);
    expect(make({ apiKey: API_KEY, accessToken: "at" })).toThrow("exactly one of `apiKey` and `accessToken`");
    expect(make({})).toThrow("exactly one of `apiKey` and `accessToken`");
    expect(make({ accessToken: "" })).toThrow("`accessToken` must be a non-empty string");
    expect(make({ apiKey: API_KEY, refreshAccessToken: async () => "x" })).toThrow("`refreshAccessToken` must be a function, given with `accessToken`");
    expect(make({ accessToken: "at", refreshAccessToken: "x" })).toThrow("`refreshAccessToken` must be a function");
    expect(make({ accessToken: "at", refreshAccessToken: async () => "x" })).not.toThrow();
  });
});

describe("refresh on 401 invalid_token", () => {
  it("refreshes once and repeats the request with the new token", async () => {
    withToken("old").get("/v1/ext/items/1").reply(401, problem(401, "invalid_token"), INVALID);
    withToken("new").get("/v1/ext/items/1").reply(200, item("1"));
    const refresh = jest.fn(async () => "new");
    const stageline = oauthClient({ accessToken: "old", refreshAccessToken: refresh });
    await expect(stageline.items.get("1")).resolves.toMatchObject({ item_id: "1" });
    expect(refresh).toHaveBeenCalledTimes(1);
    // The new token is kept for the next calls.
    withToken("new").get("/v1/ext/me").reply(200, ME);
    await stageline.me();
    expect(refresh).toHaveBeenCalledTimes(1);
  });

  it("repeats a create with its idempotency key and body after the refresh", async () => {
    const keys: string[] = [];
    const record = (status: number, body: object, headers: Record<string, string> = {}) =>
      function (this: nock.ReplyFnContext): nock.ReplyFnResult {
        keys.push(String(this.req.headers["idempotency-key"]));
        return [status, body, headers];
      };
    withToken("old").post("/v1/ext/items", CREATE_BODY).reply(record(401, problem(401, "invalid_token"), INVALID));
    withToken("new").post("/v1/ext/items", CREATE_BODY).reply(record(201, item("9")));
    await expect(oauthClient({ accessToken: "old", refreshAccessToken: () => "new" }).items.create(CREATE_BODY)).resolves.toMatchObject({ item_id: "9" });
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(keys[0]);
  });

  it("repeats only once: a second invalid_token is an AuthenticationError", async () => {
    withToken("old").get("/v1/ext/me").reply(401, problem(401, "invalid_token"), INVALID);
    withToken("new").get("/v1/ext/me").reply(401, problem(401, "invalid_token"), INVALID);
    const refresh = jest.fn(async () => "new");
    await expect(oauthClient({ accessToken: "old", refreshAccessToken: refresh }).me()).rejects.toBeInstanceOf(AuthenticationError);
    expect(refresh).toHaveBeenCalledTimes(1);
  });

  it("shares one refresh between concurrent calls that failed with the same token", async () => {
    withToken("old").get("/v1/ext/me").times(3).reply(401, problem(401, "invalid_token"), INVALID);
    withToken("new").get("/v1/ext/me").times(3).reply(200, ME);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const refresh = jest.fn(async () => {
      await gate;
      return "new";
    });
    const stageline = oauthClient({ accessToken: "old", refreshAccessToken: refresh });
    const calls = Promise.all([stageline.me(), stageline.me(), stageline.me()]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    await expect(calls).resolves.toEqual([ME, ME, ME]);
    expect(refresh).toHaveBeenCalledTimes(1);
  });

  it("a call that failed with a token already replaced retries with the new one without refreshing again", async () => {
    const refresh = jest.fn(async () => "new");
    const stageline = oauthClient({ accessToken: "old", refreshAccessToken: refresh });
    // First call: fails, refreshes, succeeds. Second call was sent with "old" before the refresh finished.
    let answerSlow!: () => void;
    const slowAnswered = new Promise<void>((resolve) => (answerSlow = resolve));
    withToken("old").get("/v1/ext/items/slow").reply(async () => {
      await slowAnswered;
      return [401, problem(401, "invalid_token"), INVALID];
    });
    withToken("old").get("/v1/ext/me").reply(401, problem(401, "invalid_token"), INVALID);
    withToken("new").get("/v1/ext/me").reply(200, ME);
    withToken("new").get("/v1/ext/items/slow").reply(200, item("slow"));
    const slow = stageline.items.get("slow");
    await new Promise((resolve) => setTimeout(resolve, 20));
    await expect(stageline.me()).resolves.toEqual(ME);
    answerSlow();
    await expect(slow).resolves.toMatchObject({ item_id: "slow" });
    expect(refresh).toHaveBeenCalledTimes(1);
  });

  it("does not refresh on a 401 without the invalid_token challenge, on a 403, or without a callback", async () => {
    const refresh = jest.fn(async () => "new");
    withToken("old").get("/v1/ext/me").reply(401, problem(401, "invalid_api_key"), { "WWW-Authenticate": 'Bearer resource_metadata="x"' });
    await expect(oauthClient({ accessToken: "old", refreshAccessToken: refresh }).me()).rejects.toBeInstanceOf(AuthenticationError);
    withToken("old").get("/v1/ext/items/1").reply(403, problem(403, "insufficient_scope"), { "WWW-Authenticate": 'Bearer error="insufficient_scope", scope="items:read"' });
    await expect(oauthClient({ accessToken: "old", refreshAccessToken: refresh }).items.get("1")).rejects.toBeInstanceOf(PermissionError);
    expect(refresh).not.toHaveBeenCalled();
    withToken("old").get("/v1/ext/me").reply(401, problem(401, "invalid_token"), INVALID);
    await expect(oauthClient({ accessToken: "old" }).me()).rejects.toBeInstanceOf(AuthenticationError);
  });

  it("a failing refresh fails the call with its error; the next failure tries again", async () => {
    const refresh = jest.fn<Promise<string>, []>().mockRejectedValueOnce(new Error("invalid_grant")).mockResolvedValueOnce("new");
    const stageline = oauthClient({ accessToken: "old", refreshAccessToken: refresh });
    withToken("old").get("/v1/ext/me").times(2).reply(401, problem(401, "invalid_token"), INVALID);
    withToken("new").get("/v1/ext/me").reply(200, ME);
    await expect(stageline.me()).rejects.toThrow("invalid_grant");
    await expect(stageline.me()).resolves.toEqual(ME);
    expect(refresh).toHaveBeenCalledTimes(2);
  });
});

describe("a token the server refused, said so (issue 39)", () => {
  /** The server's answer to an MCP token on the REST API (server/src/services/oauth-tokens.ts `tokenRejection`). */
  const said = "The access token was issued for resource https://stageline.test/v1/ext/mcp, not for https://stageline.test/v1/ext.";
  const WRONG = {
    "WWW-Authenticate": `Bearer error="invalid_token", error_description="${said}", resource_metadata="https://stageline.test/.well-known/oauth-protected-resource/v1/ext"`,
  };
  const wrongResource = problem(401, "invalid_api_key", { title: "Invalid credentials", detail: `${said} Use it there.`, token_error: "wrong_resource" });

  it("a token for another resource is an AccessTokenError and spends no refresh", async () => {
    withToken("mcp-token").get("/v1/ext/me").reply(401, wrongResource, WRONG);
    const refresh = jest.fn(async () => "new");
    const err: unknown = await oauthClient({ accessToken: "mcp-token", refreshAccessToken: refresh }).me().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AccessTokenError);
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err).toMatchObject({ status: 401, code: "invalid_api_key", reason: "wrong_resource", description: said });
    expect((err as Error).message).not.toMatch(/api key/i);
    expect(refresh).not.toHaveBeenCalled();
  });

  it("an expired token, and an unknown one (the server forgets expired tokens), are refreshed once; a second refusal says why", async () => {
    for (const reason of ["expired", "unknown"] as const) {
      withToken("old").get("/v1/ext/me").reply(401, problem(401, "invalid_api_key", { token_error: reason }), INVALID);
      withToken("new").get("/v1/ext/me").reply(401, problem(401, "invalid_api_key", { token_error: reason }), INVALID);
      const refresh = jest.fn(async () => "new");
      const err: unknown = await oauthClient({ accessToken: "old", refreshAccessToken: refresh }).me().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AccessTokenError);
      expect(err).toMatchObject({ reason, description: "The access token expired" });
      expect(refresh).toHaveBeenCalledTimes(1);
    }
  });

  it("an API key's 401 stays a plain AuthenticationError; a challenge without token_error is reason unknown", async () => {
    nock(ORIGIN).get("/v1/ext/me").reply(401, problem(401, "invalid_api_key"));
    const keyErr: unknown = await client().me().catch((e: unknown) => e);
    expect(keyErr).toBeInstanceOf(AuthenticationError);
    expect(keyErr).not.toBeInstanceOf(AccessTokenError);
    withToken("old").get("/v1/ext/me").reply(401, problem(401, "invalid_api_key"), INVALID);
    await expect(oauthClient({ accessToken: "old" }).me()).rejects.toMatchObject({ name: "AccessTokenError", reason: "unknown" });
  });

  it("reads auth-params of a challenge, quoted (with escapes) or not", () => {
    const challenge = 'Bearer realm="a \\"b\\"", error=invalid_token, error_description="x, y=z"';
    expect(challengeParam(challenge, "realm")).toBe('a "b"');
    expect(challengeParam(challenge, "error")).toBe("invalid_token");
    expect(challengeParam(challenge, "error_description")).toBe("x, y=z");
    expect(challengeParam(challenge, "scope")).toBeUndefined();
  });
});

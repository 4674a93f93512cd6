/**
 * Real MCP clients against the real authorization server (issue 39 items 2 and 8; CONTRACT "Connect with OAuth 2.1",
 * refresh tokens): the official MCP TypeScript SDK in both lines, pinned in package.json (1.x
 * `@modelcontextprotocol/sdk` 1.32.2, what most MCP hosts use; 2.x `@modelcontextprotocol/client` 2.4.0), each
 * registering by Dynamic Client Registration and by Client ID Metadata Document. Each run: a 401 with no credential →
 * the SDK's own discovery (Protected Resource Metadata, authorization server metadata) and registration → the
 * console's sign-in and consent pages driven over HTTP (CSRF token, the boxes left as ticked) → the SDK's code
 * exchange → a tool call → the access token expired in the database → the SDK refreshes on the 401 (rotation: a new
 * refresh token) and repeats the call → expired again → a second refresh. The authorization and registration
 * requests each SDK sent are checked as observed (docs/oauth.md "What MCP clients send" quotes them).
 */
import { createHash } from "node:crypto";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError as UnauthorizedV1, type OAuthClientProvider as ProviderV1 } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2, UnauthorizedError as UnauthorizedV2 } from "@modelcontextprotocol/client";
import { SCOPES } from "@stageline/shared";
import { createConsoleUser, signInOverHttp } from "./helpers/console-browser";
import { selfSignedCert, startMetadataDocumentServer, type MetadataDocumentServer } from "./helpers/metadata-document-server";
import { MemoryOAuthProvider as MemoryProvider } from "./helpers/mcp-oauth-provider";
import { formOf, TestBrowser } from "./helpers/oauth-flow";
import { startTestServer, type TestServer } from "./helpers/test-server";

jest.setTimeout(60_000);

/** The app's redirect URI: a loopback callback the test never serves (the browser stops at the redirect). */
const REDIRECT = "http://127.0.0.1:9/mcp-callback";
const API_SCOPES = SCOPES.join(" ");

let t: TestServer;
let docs: MetadataDocumentServer;
let sessionCookie = "";

beforeAll(async () => {
  const tls = selfSignedCert();
  docs = await startMetadataDocumentServer(tls);
  t = await startTestServer({ oauthMetadataCa: tls.cert });
  const user = await createConsoleUser(t, "admin");
  sessionCookie = (await signInOverHttp(t.url, user.email, user.password)).cookie!;
}, 60_000);
afterAll(async () => {
  await t?.close();
  await docs?.close();
});

/** What an SDK line needs here: a connected client, and the transport's step after the redirect. */
interface Sdk {
  name: string;
  /** A client over Streamable HTTP with `provider` as its only credential; `connect` resolves or rejects. */
  open(provider: MemoryProvider, fetchFn: typeof fetch): { connect(): Promise<void>; callTool(name: string): Promise<{ isError?: unknown }>; finishAuth(callback: URL): Promise<void>; close(): Promise<void> };
  unauthorized: new (...args: never[]) => Error;
}

const mcpUrl = () => new URL(`${t.url}/v1/ext/mcp`);

const sdks: Record<"1.x" | "2.x", Sdk> = {
  "1.x": {
    name: "@modelcontextprotocol/sdk 1.32.2",
    open(provider, fetchFn) {
      const transport = new TransportV1(mcpUrl(), { authProvider: provider as unknown as ProviderV1, fetch: fetchFn });
      const client = new ClientV1({ name: "matrix-v1", version: "1.0.0" });
      return {
        connect: () => client.connect(transport),
        callTool: async (name) => (await client.callTool({ name, arguments: {} })) as { isError?: unknown },
        finishAuth: (callback) => transport.finishAuth(callback.searchParams.get("code")!),
        close: () => client.close(),
      };
    },
    unauthorized: UnauthorizedV1,
  },
  "2.x": {
    name: "@modelcontextprotocol/client 2.4.0",
    open(provider, fetchFn) {
      const transport = new TransportV2(mcpUrl(), { authProvider: provider, fetch: fetchFn });
      const client = new ClientV2({ name: "matrix-v2", version: "1.0.0" });
      return {
        connect: () => client.connect(transport),
        callTool: async (name) => (await client.callTool({ name, arguments: {} })) as { isError?: unknown },
        finishAuth: (callback) => transport.finishAuth(callback.searchParams),
        close: () => client.close(),
      };
    },
    unauthorized: UnauthorizedV2,
  },
};

/** A fetch that records the OAuth requests (`/oauth/...`) the SDK sends: method, path and urlencoded or JSON body. */
function recordingFetch(log: { path: string; body: Record<string, unknown> }[]): typeof fetch {
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.pathname.startsWith("/oauth/") && typeof init?.body === "string") {
      const body = init.body.trim().startsWith("{") ? (JSON.parse(init.body) as Record<string, unknown>) : Object.fromEntries(new URLSearchParams(init.body));
      log.push({ path: url.pathname, body });
    } else if (url.pathname.startsWith("/oauth/") && init?.body instanceof URLSearchParams) {
      log.push({ path: url.pathname, body: Object.fromEntries(init.body) });
    }
    return fetch(input, init);
  };
}

/** The person's part: the authorization URL in a signed-in browser, the consent form sent as shown. @returns the callback. */
async function consentOverHttp(authorizationUrl: URL, appName: string): Promise<{ callback: URL; offered: string[] }> {
  const b = new TestBrowser(t.url);
  b.jar.add(sessionCookie);
  const page = await b.get(authorizationUrl.href);
  expect(page.url).toMatch(/\/console\/oauth\/interaction\//);
  expect(page.text).toContain(`Connect ${appName} to Stageline`);
  const offered = [...page.text.matchAll(/name="scopes" type="checkbox" value="([^"]+)"/g)].map((m) => m[1]!);
  const ticked = [...page.text.matchAll(/name="scopes" type="checkbox" value="([^"]+)" checked/g)].map((m) => m[1]!);
  const { action, csrf } = formOf(page.text);
  const form = new URLSearchParams({ _csrf: csrf, decision: "allow" });
  for (const s of ticked) form.append("scopes", s);
  const done = await b.post(action, form);
  expect(done.status).toBe(303);
  return { callback: new URL(done.location!), offered };
}

/** Expires `accessToken` in the database (as an hour would): the resource side then answers 401 invalid_token. */
async function expire(accessToken: string): Promise<void> {
  const id = createHash("sha256").update(accessToken).digest("base64url");
  const rows = await t.server.ctx.db.sql.query<{ id: string }>(
    `update oauth_records set expires_at = now() - interval '1 minute' where model = 'AccessToken' and id = $1 returning id`,
    [id],
  );
  expect(rows).toHaveLength(1);
}

/** The authorization request parameters each SDK sent, as observed (names sorted; values of the stable ones). */
const observed: Record<string, Record<string, string>> = {};

describe.each([
  ["1.x", "dcr"],
  ["1.x", "cimd"],
  ["2.x", "dcr"],
  ["2.x", "cimd"],
] as const)("MCP TypeScript SDK %s registering by %s", (line, registration) => {
  it("discovers, registers, gets consent, calls a tool, and refreshes an expired token twice with rotation", async () => {
    const sdk = sdks[line];
    const appName = `Matrix ${line} ${registration}`;
    let cimdUrl: string | undefined;
    if (registration === "cimd") {
      const docPath = `/clients/${line}/client.json`;
      cimdUrl = `${docs.origin}${docPath}`;
      docs.documents.set(docPath, () => ({ client_id: cimdUrl, client_name: appName, redirect_uris: [REDIRECT], token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"], response_types: ["code"] }));
    }
    const provider = new MemoryProvider(appName, REDIRECT, cimdUrl);
    const log: { path: string; body: Record<string, unknown> }[] = [];
    const fetchFn = recordingFetch(log);

    // No credential: 401 → the SDK's discovery and registration → it hands the authorization URL to the user agent.
    const first = sdk.open(provider, fetchFn);
    await expect(first.connect()).rejects.toBeInstanceOf(sdk.unauthorized);
    const authUrl = provider.authorizationUrl!;
    expect(authUrl.origin + authUrl.pathname).toBe(`${t.url}/oauth/auth`);
    const params = Object.fromEntries(authUrl.searchParams);
    observed[`${line} ${registration}`] = params;
    expect(params.resource).toBe(mcpUrl().href);
    expect(params.code_challenge_method).toBe("S256");
    expect(params.redirect_uri).toBe(REDIRECT);
    if (registration === "cimd") {
      expect(provider.info?.client_id).toBe(cimdUrl);
      expect(log.some((r) => r.path === "/oauth/reg")).toBe(false);
    } else {
      const reg = log.find((r) => r.path === "/oauth/reg")!.body;
      observed[`${line} ${registration} registration`] = Object.fromEntries(Object.entries(reg).map(([k, v]) => [k, JSON.stringify(v)]));
      expect(reg.grant_types).toEqual(["authorization_code", "refresh_token"]);
      expect(reg.token_endpoint_auth_method).toBe("none");
      expect(params.client_id).toBe(provider.info!.client_id);
    }
    // What each line asks (docs/oauth.md): 1.x copies the API scopes from WWW-Authenticate and sends no prompt;
    // 2.x adds offline_access (the metadata lists it and the client registered refresh_token) with prompt=consent.
    if (line === "1.x") {
      expect(params.scope).toBe(API_SCOPES);
      expect(params).not.toHaveProperty("prompt");
    } else {
      expect(params.scope).toBe(`${API_SCOPES} offline_access`);
      expect(params.prompt).toBe("consent");
    }

    // Consent over HTTP: offline_access is on the page either way, and left ticked.
    const { callback, offered } = await consentOverHttp(authUrl, appName);
    expect(offered).toEqual([...SCOPES, "offline_access"]);
    expect(callback.searchParams.get("iss")).toBe(new URL(t.url).origin);
    await first.finishAuth(callback);
    const issued = provider.saved!;
    expect(issued.access_token).toBeTruthy();
    expect(issued.refresh_token).toBeTruthy();
    expect(issued.scope!.split(" ")).toEqual(SCOPES.filter((s) => issued.scope!.includes(s)));

    // A tool call with the token.
    const session = sdk.open(provider, fetchFn);
    await session.connect();
    expect((await session.callTool("describe_pipelines")).isError).toBeFalsy();

    // Expired: the SDK refreshes on the 401 (a new refresh token: rotation) and repeats the call; then once more.
    let previous = issued;
    for (let round = 1; round <= 2; round++) {
      await expire(previous.access_token);
      expect((await session.callTool("list_items")).isError).toBeFalsy();
      const now = provider.saved!;
      expect(now.access_token).not.toBe(previous.access_token);
      expect(now.refresh_token).toBeTruthy();
      expect(now.refresh_token).not.toBe(previous.refresh_token);
      const refreshes = log.filter((r) => r.path === "/oauth/token" && r.body.grant_type === "refresh_token");
      expect(refreshes).toHaveLength(round);
      expect(refreshes[round - 1]!.body.refresh_token).toBe(previous.refresh_token);
      previous = now;
    }
    // The refresh request each line sends: client_id, and the resource.
    const lastRefresh = log.filter((r) => r.path === "/oauth/token" && r.body.grant_type === "refresh_token").at(-1)!.body;
    observed[`${line} ${registration} refresh`] = Object.fromEntries(Object.entries(lastRefresh).map(([k, v]) => [k, k === "refresh_token" ? "…" : String(v)]));
    expect(lastRefresh.client_id).toBe(provider.info!.client_id);
    await session.close();
    await first.close();
  });
});

afterAll(() => {
  // The observed requests, for docs/oauth.md (printed with JEST_SHOW_OBSERVED=1).
  if (process.env.JEST_SHOW_OBSERVED) console.log(JSON.stringify(observed, null, 2));
});

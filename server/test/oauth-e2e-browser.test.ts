/**
 * OAuth 2.1 end to end (issue 32; CONTRACT "Connect with OAuth 2.1"): the official MCP SDK client's own OAuth support
 * (`@modelcontextprotocol/client`: its `OAuthClientProvider` interface, `auth()` and the Streamable HTTP transport's
 * `authProvider`) connects to `/v1/ext/mcp` with no key, against the real authorization server (oidc-provider at
 * `/oauth`) and the real resource side, with a real user in headless Chromium:
 * 401 → protected resource metadata (RFC 9728) → authorization server metadata (RFC 8414) → client registration by
 * Client ID Metadata Document (first run) or Dynamic Client Registration (second run) → console sign-in and consent
 * with a scope unticked → code + PKCE → token → `tools/list` shows only the granted scopes' tools → a tool call → a
 * forced refresh (the transport refreshes on its own after a 401) → revocation on the console's Connected apps page →
 * the next call is 401. Then a token for the REST resource, got by the same SDK helper, works through
 * `@stageline/client` with `accessToken`, and `/me` names the app. Last, a confidential app registered in the console's
 * Developer apps, used as n8n's OAuth2 credential uses it (`resource` and `prompt=consent` on the authorization
 * request only, client_secret_basic at the token endpoint), refreshed by `@stageline/client`'s `refreshAccessToken`.
 */
import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import {
  Client,
  StreamableHTTPClientTransport,
  UnauthorizedError,
  auth,
} from "@modelcontextprotocol/client";
import { Stageline } from "@stageline/client";
import type { Page } from "playwright-core";
import { BROWSER_TEST_TIMEOUT_MS, clickAndLoad, signIn, useConsoleTestServer } from "./helpers/console-browser";
import { startTestServer } from "./helpers/test-server";
import { selfSignedCert } from "./helpers/metadata-document-server";
import { MemoryOAuthProvider } from "./helpers/mcp-oauth-provider";
import { registerClient } from "../src/services/oauth-clients";

jest.setTimeout(BROWSER_TEST_TIMEOUT_MS * 2);

const tls = selfSignedCert();
const env = useConsoleTestServer("admin", () => startTestServer({ oauthMetadataCa: tls.cert }));
let app: http.Server;
let docs: https.Server;
let redirect = "";
let cimdUrl = "";
let cimdFetches = 0;

beforeAll(async () => {
  // The app's redirect URI (a loopback callback page) and the https server of its metadata document.
  app = http.createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>Agent</title><h1>Connected</h1>"));
  await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
  redirect = `http://127.0.0.1:${(app.address() as AddressInfo).port}/callback`;
  docs = https.createServer(tls, (req, res) => {
    if (req.url !== "/agent/client.json") return res.writeHead(404).end();
    cimdFetches++;
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({ client_id: cimdUrl, client_name: "CIMD Agent", redirect_uris: [redirect], token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"], response_types: ["code"] }),
    );
  });
  await new Promise<void>((resolve) => docs.listen(0, "127.0.0.1", resolve));
  cimdUrl = `https://localhost:${(docs.address() as AddressInfo).port}/agent/client.json`;
});
afterAll(async () => {
  app?.closeAllConnections();
  docs?.closeAllConnections();
  await Promise.all([new Promise((r) => app?.close(r)), new Promise((r) => docs?.close(r))]);
});

const mcpUrl = () => new URL(`${env.t.url}/v1/ext/mcp`);
const restUrl = () => new URL(`${env.t.url}/v1/ext`);

/**
 * The user's part in the browser: opens the authorization URL the SDK produced, checks the consent page names the
 * app, unticks `untick`, allows. @returns the redirect URI's query the app receives.
 */
async function consent(page: Page, url: URL, appName: string, untick: string[]): Promise<URLSearchParams> {
  await page.goto(url.href);
  await page.waitForURL(/\/console\/oauth\/interaction\//);
  await expect(page.getByRole("heading", { level: 1 }).innerText()).resolves.toBe(`Connect ${appName} to Stageline`);
  for (const scope of untick) await page.getByLabel(scope).uncheck();
  await clickAndLoad(page, page.getByRole("button", { name: "Allow" }));
  await page.waitForURL((u) => u.href.startsWith(redirect));
  return new URL(page.url()).searchParams;
}

/** Connects an SDK client over Streamable HTTP with `provider` as its only credential. */
async function open(provider: MemoryOAuthProvider): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider });
  const client = new Client({ name: "e2e-agent", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

/** The whole first connection: 401 → the SDK's discovery and registration → consent in the browser → token. */
async function connectFirstTime(page: Page, provider: MemoryOAuthProvider, appName: string, untick: string[]): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider });
  await expect(new Client({ name: "e2e-agent", version: "1.0.0" }).connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
  const authUrl = provider.authorizationUrl!;
  expect(authUrl.origin + authUrl.pathname).toBe(`${env.t.url}/oauth/auth`);
  expect(authUrl.searchParams.get("resource")).toBe(mcpUrl().href);
  expect(authUrl.searchParams.get("code_challenge_method")).toBe("S256");
  const callback = await consent(page, authUrl, appName, untick);
  await transport.finishAuth(callback);
  expect(provider.saved?.access_token).toBeTruthy();
  return (await open(provider)).client;
}

const toolNames = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name).sort();

/** A raw MCP request with a bearer token: the status and challenge the resource side answers. */
async function rawMcp(token: string): Promise<{ status: number; challenge: string | null }> {
  const res = await fetch(mcpUrl(), {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });
  await res.text();
  return { status: res.status, challenge: res.headers.get("www-authenticate") };
}

it("the SDK connects by Client ID Metadata Document, sees only its granted tools, refreshes, and stops at revocation", async () => {
  // Discovery as the SDK meets it: a 401 naming the resource metadata.
  const bare = await fetch(mcpUrl(), { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
  expect(bare.status).toBe(401);
  expect(bare.headers.get("www-authenticate")).toContain(`resource_metadata="${env.t.url}/.well-known/oauth-protected-resource/v1/ext/mcp"`);

  const provider = new MemoryOAuthProvider("unused: the document names the app", redirect, cimdUrl);
  const page = await signIn(env.browser, env.t.url, env.user);
  const client = await connectFirstTime(page, provider, "CIMD Agent", ["items:write", "hooks:manage"]);
  // Registered by its metadata document: the client_id is the document's URL, fetched by the server.
  expect(provider.info?.client_id).toBe(cimdUrl);
  expect(cimdFetches).toBeGreaterThan(0);
  expect(provider.saved!.refresh_token).toBeTruthy();
  expect(provider.saved!.scope!.split(" ").sort()).toEqual(["items:read", "tasks:read", "tasks:write"]);

  // Only the granted scopes' tools: no item writes, no webhooks.
  const names = await toolNames(client);
  expect(names).toEqual(
    ["check_duplicates", "complete_task", "create_task", "describe_pipelines", "get_item", "get_task", "list_events", "list_items", "list_notes", "list_tasks", "list_users", "update_task"],
  );
  const pipelines = (await client.callTool({ name: "describe_pipelines", arguments: {} })) as { isError?: boolean; structuredContent?: { pipelines: unknown[] } };
  expect(pipelines.isError).toBeFalsy();
  expect(pipelines.structuredContent!.pipelines).toHaveLength(1);
  // A write with a granted scope: the task records the grant as its creator (CONTRACT: `created_by` is the grant).
  const created = (await client.callTool({
    name: "create_task",
    arguments: { title: "Call back (by the agent)", due_at: "2026-12-01T09:00:00Z", assigned_to: env.user.id },
  })) as { isError?: boolean; structuredContent?: { created_by?: string } };
  expect(created.isError).toBeFalsy();
  const grants = await env.t.server.ctx.db.sql.query<{ grant_id: string }>(`select grant_id from oauth_records where model = 'AccessToken' and client_id = $1`, [cimdUrl]);
  expect(grants.map((g) => g.grant_id)).toContain(created.structuredContent!.created_by);

  // Forced refresh: the stored access token no longer authenticates; the transport's 401 handling refreshes with
  // the refresh token and repeats the request.
  const before = provider.saved!;
  provider.saved = { ...before, access_token: "expired-or-unknown" };
  expect(await toolNames(client)).toEqual(names);
  expect(provider.saved!.access_token).not.toBe("expired-or-unknown");
  expect(provider.saved!.access_token).not.toBe(before.access_token);
  expect(provider.saved!.refresh_token).not.toBe(before.refresh_token);
  // The old refresh token is spent (rotation).
  const reuse = await fetch(`${env.t.url}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: before.refresh_token!, client_id: cimdUrl }),
  });
  expect(reuse.status).toBe(400);
  // Reusing a rotated refresh token revoked the grant (oidc-provider's reuse detection): connect again to revoke
  // a live grant through the console below.
  provider.saved = undefined;
  await client.close();
  const again = await connectFirstTime(page, provider, "CIMD Agent", ["items:write", "hooks:manage"]);
  const live = provider.saved!.access_token;
  expect((await rawMcp(live)).status).toBe(200);

  // Revocation on the console's Connected apps page.
  await page.goto(`${env.t.url}/console/connected-apps`);
  // Named by its metadata document's client_name (the consent step records it: oauth/adapter.ts), not by its URL.
  const row = page.getByRole("row", { name: /CIMD Agent/ });
  await expect(row.innerText()).resolves.toMatch(/^CIMD Agent\s+items:read, offline_access, tasks:read, tasks:write\s/);
  await clickAndLoad(page, row.getByRole("link", { name: /Revoke/ }));
  await clickAndLoad(page, page.getByRole("button", { name: "Revoke access" }));
  await page.waitForURL(/\/console\/connected-apps$/);
  await expect(page.getByRole("row", { name: /CIMD Agent/ }).count()).resolves.toBe(0);

  // The next call is 401 with the bearer challenge; the SDK can neither use nor refresh it any more.
  const after = await rawMcp(live);
  expect(after.status).toBe(401);
  expect(after.challenge).toContain('error="invalid_token"');
  provider.authorizationUrl = undefined;
  await expect(again.listTools()).rejects.toThrow();
  // Its refresh failed (invalid_grant): the SDK dropped the tokens and asks for a new authorization.
  expect(provider.saved).toBeUndefined();
  expect(provider.authorizationUrl).toBeDefined();
  await again.close();
  await page.close();
});

it("the SDK registers by Dynamic Client Registration; a REST token works through @stageline/client and /me names the app", async () => {
  const page = await signIn(env.browser, env.t.url, env.user);
  // MCP, registered by DCR (no metadata document URL): the client_name it registered is on the consent page.
  const mcpProvider = new MemoryOAuthProvider("DCR Agent", redirect);
  const client = await connectFirstTime(page, mcpProvider, "DCR Agent", ["tasks:write"]);
  expect(mcpProvider.info?.client_id).toBeTruthy();
  expect(mcpProvider.info?.client_id).not.toMatch(/^https:/);
  const names = await toolNames(client);
  expect(names).toContain("create_item");
  expect(names).toContain("list_tasks");
  for (const hidden of ["create_task", "update_task", "complete_task"]) expect(names).not.toContain(hidden);
  const listed = (await client.callTool({ name: "list_items", arguments: {} })) as { isError?: boolean };
  expect(listed.isError).toBeFalsy();
  await client.close();

  // The REST API resource, through the SDK's auth() helper (discovery from /v1/ext's metadata).
  const restProvider = new MemoryOAuthProvider("REST Agent", redirect);
  await expect(auth(restProvider, { serverUrl: restUrl() })).resolves.toBe("REDIRECT");
  expect(restProvider.authorizationUrl!.searchParams.get("resource")).toBe(restUrl().href);
  const callback = await consent(page, restProvider.authorizationUrl!, "REST Agent", ["hooks:manage"]);
  await expect(auth(restProvider, { serverUrl: restUrl(), authorizationCode: callback.get("code")!, iss: callback.get("iss") ?? undefined })).resolves.toBe("AUTHORIZED");
  const token = restProvider.saved!.access_token;

  const stageline = new Stageline({ baseUrl: env.t.url, accessToken: token });
  const me = await stageline.me();
  expect(me.company.id).toBe(env.t.companyId);
  expect(me.credential).toEqual({ type: "oauth", app: { client_id: restProvider.info!.client_id, name: "REST Agent" } });
  expect(me.key.name).toBe("REST Agent");
  expect([...me.key.scopes].sort()).toEqual(["items:read", "items:write", "tasks:read", "tasks:write"]);
  const items = await stageline.items.list();
  expect(Array.isArray(items.data)).toBe(true);

  // Bound to its resource: the REST token is refused at the MCP endpoint, and the MCP token at the REST API.
  expect((await rawMcp(token)).status).toBe(401);
  const cross = await fetch(`${env.t.url}/v1/ext/me`, { headers: { authorization: `Bearer ${mcpProvider.saved!.access_token}` } });
  expect(cross.status).toBe(401);
  await page.close();
});

it("a confidential app from Developer apps (as n8n uses it): client_secret_basic, no `resource` at the token endpoint, refresh through @stageline/client", async () => {
  const { app: registered, clientSecret } = await registerClient(
    env.t.server.ctx.prisma,
    { name: "n8n (Acme)", redirect_uris: redirect, type: "confidential" },
    { actor: { type: "user", id: env.user.id, email: env.user.email }, companyId: env.t.companyId },
  );
  const basic = "Basic " + Buffer.from(`${encodeURIComponent(registered.clientId)}:${encodeURIComponent(clientSecret!)}`).toString("base64");
  const token = async (params: Record<string, string>, authorization = basic) => {
    const res = await fetch(`${env.t.url}/oauth/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", authorization }, body: new URLSearchParams(params) });
    return { status: res.status, body: (await res.json()) as { access_token: string; refresh_token?: string; scope: string; error?: string } };
  };
  // What n8n's credential sends: `resource` and `prompt=consent` on the authorization request only.
  const verifier = randomBytes(32).toString("base64url");
  const url = new URL(`${env.t.url}/oauth/auth`);
  url.search = new URLSearchParams({
    client_id: registered.clientId,
    redirect_uri: redirect,
    response_type: "code",
    scope: "items:read items:write tasks:read tasks:write hooks:manage offline_access",
    state: "n8n-state",
    resource: restUrl().href,
    prompt: "consent",
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
  }).toString();
  const page = await signIn(env.browser, env.t.url, env.user);
  const callback = await consent(page, url, "n8n (Acme)", ["hooks:manage"]);
  const code = callback.get("code")!;
  const exchange = { grant_type: "authorization_code", code, redirect_uri: redirect, code_verifier: verifier };
  // The secret's hash is no secret: refused.
  const wrong = "Basic " + Buffer.from(`${encodeURIComponent(registered.clientId)}:${encodeURIComponent("not-the-secret")}`).toString("base64");
  expect((await token(exchange, wrong)).status).toBe(401);
  const issued = await token(exchange);
  expect(issued.status).toBe(200);
  expect(issued.body.refresh_token).toBeTruthy();
  expect(issued.body.scope.split(" ").sort()).toEqual(["items:read", "items:write", "tasks:read", "tasks:write"]);
  const stored = await env.t.server.ctx.db.sql.query<{ aud: string; company_id: string }>(
    `select payload->>'aud' as aud, company_id from oauth_records where model = 'AccessToken' and client_id = $1`,
    [registered.clientId],
  );
  expect(stored).toEqual([{ aud: restUrl().href, company_id: env.t.companyId }]);

  // @stageline/client with a token the server no longer knows: its refreshAccessToken callback refreshes for real
  // (client_secret_basic, again without `resource`) and the call is repeated with the new token.
  let refreshToken = issued.body.refresh_token!;
  let refreshes = 0;
  const stageline = new Stageline({
    baseUrl: env.t.url,
    accessToken: "stale-" + issued.body.access_token.slice(6),
    refreshAccessToken: async () => {
      refreshes++;
      const next = await token({ grant_type: "refresh_token", refresh_token: refreshToken });
      expect(next.status).toBe(200);
      refreshToken = next.body.refresh_token!;
      return next.body.access_token;
    },
  });
  const me = await stageline.me();
  expect(refreshes).toBe(1);
  expect(me.credential).toEqual({ type: "oauth", app: { client_id: registered.clientId, name: "n8n (Acme)" } });
  expect(me.company).toEqual({ id: env.t.companyId, name: expect.any(String) });
  await page.close();
});

/**
 * Issue 32, the resource side (CONTRACT "Connect with OAuth 2.1", "MCP server"; MCP 2026-07-28 "Authorization"; RFC
 * 6750, RFC 8707, RFC 9728): every `/v1/ext` endpoint, REST and MCP, accepts `Authorization: Bearer <access token>`
 * beside API keys. The tokens are records written by helpers/oauth-records.ts in the format of docs/oauth-storage.md
 * (hashed id, no jti, company_id, grant), not by the authorization server. PGlite by default; PostgreSQL with
 * TEST_DATABASE_URL (then also two server processes on one database).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { pino } from "pino";
import { MeSchema, RATE_LIMIT, SCOPES } from "@stageline/shared";
import { createApp } from "../src/app";
import { openDatabase } from "../src/db/database";
import { awayFromWindowEnd } from "./helpers/fixed-window";
import { useProcessPair } from "./helpers/process-pair";
import { bearer, issueAccessToken, revokeGrant, type TokenOptions } from "./helpers/oauth-records";
import { startTestServer, type TestServer } from "./helpers/test-server";

let t: TestServer;
let origin: string;
beforeAll(async () => {
  t = await startTestServer();
  origin = t.server.ctx.publicOrigin();
});
afterAll(async () => {
  await t?.close();
});

/** Issues a token of the main company (all API scopes for the REST API unless told otherwise). */
function token(opts: Partial<TokenOptions> = {}) {
  return issueAccessToken(t.server.ctx.prisma, { companyId: t.companyId, scope: SCOPES.join(" "), resource: "rest", origin, ...opts });
}

/** A REST call with only the token (no x-api-key). */
function withToken(method: string, path: string, tok: string, body?: unknown) {
  return t.request(method, path, body, null, bearer(tok));
}

/** A raw JSON-RPC POST to the MCP endpoint. */
function mcp(body: unknown, headers: Record<string, string>): Promise<Response> {
  return fetch(`${t.url}/v1/ext/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18", ...headers },
    body: JSON.stringify(body),
  });
}

/** The JSON-RPC message of an answer: a JSON body, or the first `data:` of an SSE body. */
async function messageOf(res: Response): Promise<any> {
  const text = await res.text();
  if (!(res.headers.get("content-type") ?? "").includes("text/event-stream")) return JSON.parse(text);
  const data = text.split("\n").find((line) => line.startsWith("data:"));
  return JSON.parse(data!.slice("data:".length));
}

const toolsList = { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} };
const toolNames = async (headers: Record<string, string>) =>
  ((await messageOf(await mcp(toolsList, headers))).result.tools as { name: string }[]).map((x) => x.name);

const prm = (path: string) => `${origin}/.well-known/oauth-protected-resource${path}`;
const ALL_SCOPES = SCOPES.join(" ");

describe("REST API with an access token", () => {
  it("serves the token's scopes and refuses the others with 403 and an insufficient_scope challenge", async () => {
    const { token: tok } = await token({ scope: "items:read offline_access" });
    expect((await withToken("GET", "/v1/ext/items", tok)).status).toBe(200);
    expect((await withToken("GET", "/v1/ext/pipelines", tok)).status).toBe(200);
    const refused = await withToken("POST", "/v1/ext/items", tok, { name: "X", pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("insufficient_scope");
    expect(refused.body.detail).toMatch(/items:write/);
    expect(refused.headers.get("www-authenticate")).toBe(`Bearer error="insufficient_scope", scope="items:write", resource_metadata="${prm("/v1/ext")}"`);
    const tasks = await withToken("GET", "/v1/ext/tasks", tok);
    expect(tasks.status).toBe(403);
    expect(tasks.headers.get("www-authenticate")).toBe(`Bearer error="insufficient_scope", scope="tasks:read", resource_metadata="${prm("/v1/ext")}"`);
  });

  it("a write with a token records the grant as created_by and the app as the audit actor", async () => {
    const { token: tok, grantId } = await token({ clientName: "Claude" });
    const task = await withToken("POST", "/v1/ext/tasks", tok, { title: "From an agent", due_at: "2026-12-01T09:00:00Z", assigned_to: "ada" });
    expect(task.status).toBe(201);
    expect(task.body.created_by).toBe(grantId);
    const item = await withToken("POST", "/v1/ext/items", tok, { name: "Agent item", pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id });
    expect((await withToken("DELETE", `/v1/ext/items/${item.body.item_id}`, tok)).status).toBe(204);
    const audit = await t.server.ctx.prisma.auditEvent.findFirstOrThrow({ where: { companyId: t.companyId, action: "item.deleted" }, orderBy: { createdAt: "desc" } });
    expect(audit).toMatchObject({ actorType: "oauth_app", actorId: grantId, actorLabel: 'App "Claude"' });
  });

  it("refuses an expired token, a token whose grant is gone (at once), and an unknown one with 401 invalid_token saying which", async () => {
    const expired = await token({ expiresIn: -5 });
    const live = await token();
    const unknown = "x".repeat(43);
    expect((await withToken("GET", "/v1/ext/me", live.token)).status).toBe(200);
    await t.server.ctx.prisma.oAuthRecord.delete({ where: { model_id: { model: "Grant", id: live.grantId } } });
    const expiredAt = (await t.server.ctx.prisma.oAuthRecord.findUniqueOrThrow({ where: { model_id: { model: "AccessToken", id: expired.recordId } } })).expiresAt!.toISOString();
    for (const [tok, reason, description] of [
      [expired.token, "expired", `The access token expired at ${expiredAt}.`],
      [live.token, "unknown", "The access token is unknown or was revoked."],
      [unknown, "unknown", "The access token is unknown or was revoked."],
    ] as const) {
      const res = await withToken("GET", "/v1/ext/me", tok);
      // The contract's one 401 code (CONTRACT "Errors"); the title, detail and challenge speak of the token, never of an API key.
      expect({ status: res.status, code: res.body.code, title: res.body.title, token_error: res.body.token_error }).toEqual({
        status: 401,
        code: "invalid_api_key",
        title: "Invalid credentials",
        token_error: reason,
      });
      expect(res.body.detail).toMatch(/^The access token /);
      expect(JSON.stringify(res.body)).not.toMatch(/api key/i);
      expect(res.headers.get("www-authenticate")).toBe(`Bearer error="invalid_token", error_description="${description}", resource_metadata="${prm("/v1/ext")}"`);
    }
    // Revoking a grant as the console does (every record of it) also ends its other tokens.
    const a = await token();
    const b = await token({ grantId: a.grantId, clientId: a.clientId });
    expect((await withToken("GET", "/v1/ext/me", b.token)).status).toBe(200);
    await revokeGrant(t.server.ctx.prisma, a.grantId);
    expect((await withToken("GET", "/v1/ext/me", a.token)).status).toBe(401);
    expect((await withToken("GET", "/v1/ext/me", b.token)).status).toBe(401);
  });

  it("a token of company A never reads company B's item (404) and lists only A's", async () => {
    const other = await t.newCompany("Other Tenant");
    const theirs = await t.request("POST", "/v1/ext/items", { name: "B secret", pipeline_id: other.pipeline.id, stage_id: other.pipeline.stages[0]!.id }, other.apiKey);
    expect(theirs.status).toBe(201);
    const { token: tok } = await token();
    const res = await withToken("GET", `/v1/ext/items/${theirs.body.item_id}`, tok);
    expect({ status: res.status, code: res.body.code }).toEqual({ status: 404, code: "not_found" });
    expect((await withToken("PATCH", `/v1/ext/items/${theirs.body.item_id}`, tok, { name: "mine now" })).status).toBe(404);
    const list = await withToken("GET", "/v1/ext/items?limit=100", tok);
    expect(JSON.stringify(list.body)).not.toContain("B secret");
    // And B's token reads B's item.
    const theirToken = await issueAccessToken(t.server.ctx.prisma, { companyId: other.companyId, scope: "items:read", resource: "rest", origin });
    expect((await withToken("GET", `/v1/ext/items/${theirs.body.item_id}`, theirToken.token)).status).toBe(200);
  });

  it("answers 402 for a token of a company whose subscription lapsed", async () => {
    const lapsed = await t.newCompany("Lapsed Tenant");
    await t.server.ctx.prisma.company.update({ where: { id: lapsed.companyId }, data: { subscriptionActive: false } });
    const { token: tok } = await issueAccessToken(t.server.ctx.prisma, { companyId: lapsed.companyId, scope: ALL_SCOPES, resource: "rest", origin });
    expect((await withToken("GET", "/v1/ext/me", tok)).status).toBe(402);
  });
});

describe("GET /v1/ext/me says which credential called", () => {
  it("oauth, with the app's name, the grant as key.id and the API scopes without offline_access", async () => {
    const { token: tok, grantId, clientId } = await token({ scope: "offline_access items:read tasks:write", clientName: "ChatGPT" });
    const res = await withToken("GET", "/v1/ext/me", tok);
    expect(res.status).toBe(200);
    expect(MeSchema.parse(res.body)).toEqual(res.body);
    expect(res.body).toMatchObject({
      company: { id: t.companyId, name: "Acme Test" },
      key: { id: grantId, name: "ChatGPT", scopes: ["items:read", "tasks:write"] },
      credential: { type: "oauth", app: { client_id: clientId, name: "ChatGPT" } },
    });
    expect(new Date(res.body.key.expires_at).getTime()).toBeGreaterThan(Date.now() + 3_500_000);
  });

  it("names an app without a Client record (a metadata-document client) by its client_id", async () => {
    const clientId = "https://agent.example/oauth/client.json";
    const { token: tok } = await token({ clientName: null, clientId });
    const res = await withToken("GET", "/v1/ext/me", tok);
    expect(res.body.credential).toEqual({ type: "oauth", app: { client_id: clientId, name: clientId } });
  });

  it("key, for an API key", async () => {
    expect((await t.request("GET", "/v1/ext/me")).body.credential).toEqual({ type: "key", app: null });
  });
});

describe("the MCP endpoint with an access token", () => {
  it("lists only the tools the token's scopes allow, exactly as for a key with those scopes, and calls them", async () => {
    const { token: tok } = await token({ resource: "mcp", scope: "items:read offline_access" });
    const { key } = await t.newKey(["items:read"]);
    const names = await toolNames(bearer(tok));
    expect(names).toEqual(await toolNames({ "x-api-key": key }));
    expect(names).toContain("list_items");
    expect(names).not.toContain("create_item");
    expect(names).not.toContain("list_tasks");
    const call = await messageOf(await mcp({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "list_items", arguments: {} } }, bearer(tok)));
    expect(call.result.isError).toBeFalsy();
    const all = await token({ resource: "mcp" });
    expect(await toolNames(bearer(all.token))).toEqual(await toolNames({ "x-api-key": t.apiKey }));
  });

  it("a tools/call of a tool the token's scopes lack is 403 with the insufficient_scope challenge (step-up); a key keeps its tool error", async () => {
    const { token: tok } = await token({ resource: "mcp", scope: "items:read" });
    const createTask = { jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "create_task", arguments: { title: "x", due_at: "2026-12-01T09:00:00Z", assigned_to: "ada" } } };
    const refused = await mcp(createTask, bearer(tok));
    expect(refused.status).toBe(403);
    expect(refused.headers.get("www-authenticate")).toBe(`Bearer error="insufficient_scope", scope="tasks:write", resource_metadata="${prm("/v1/ext/mcp")}"`);
    expect(((await refused.json()) as { code: string }).code).toBe("insufficient_scope");
    const events = { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "list_events", arguments: {} } };
    expect((await mcp(events, bearer(tok))).status).toBe(200); // items:read is one of the scopes list_events takes
    const { key } = await t.newKey(["items:read"]);
    const keyed = await mcp(createTask, { "x-api-key": key });
    expect(keyed.status).toBe(200);
    expect(keyed.headers.get("www-authenticate")).toBeNull();
    const answer = await messageOf(keyed);
    expect(answer.error ?? answer.result?.isError).toBeTruthy();
  });

  it("a token for one resource is refused at the other (RFC 8707 audience)", async () => {
    const rest = await token({ resource: "rest" });
    const mcpToken = await token({ resource: "mcp" });
    const atMcp = await mcp(toolsList, bearer(rest.token));
    expect(atMcp.status).toBe(401);
    expect(atMcp.headers.get("www-authenticate")).toBe(
      `Bearer error="invalid_token", error_description="The access token was issued for resource ${origin}/v1/ext, not for ${origin}/v1/ext/mcp.", resource_metadata="${prm("/v1/ext/mcp")}"`,
    );
    expect(await atMcp.json()).toMatchObject({ code: "invalid_api_key", title: "Invalid credentials", token_error: "wrong_resource" });
    // The observed case of issue 39: an MCP token on the REST API, said to be one (never "Invalid API key").
    const atRest = await withToken("GET", "/v1/ext/me", mcpToken.token);
    expect(atRest.status).toBe(401);
    expect(atRest.headers.get("www-authenticate")).toBe(
      `Bearer error="invalid_token", error_description="The access token was issued for resource ${origin}/v1/ext/mcp, not for ${origin}/v1/ext.", resource_metadata="${prm("/v1/ext")}"`,
    );
    expect(atRest.body).toMatchObject({ code: "invalid_api_key", title: "Invalid credentials", token_error: "wrong_resource" });
    expect(atRest.body.detail).toContain(`issued for resource ${origin}/v1/ext/mcp`);
    expect(JSON.stringify(atRest.body)).not.toMatch(/api key/i);
    // Expired as well as for the other resource: the resource is what it is told (a refresh would not help).
    const stale = await token({ resource: "mcp", expiresIn: -5 });
    expect((await withToken("GET", "/v1/ext/me", stale.token)).body.token_error).toBe("wrong_resource");
    // Each at its own resource works.
    expect((await mcp(toolsList, bearer(mcpToken.token))).status).toBe(200);
    expect((await withToken("GET", "/v1/ext/me", rest.token)).status).toBe(200);
  });

  it("refuses an expired token and one whose grant was revoked", async () => {
    const expired = await token({ resource: "mcp", expiresIn: -1 });
    expect((await mcp(toolsList, bearer(expired.token))).status).toBe(401);
    const live = await token({ resource: "mcp" });
    expect((await mcp(toolsList, bearer(live.token))).status).toBe(200);
    await revokeGrant(t.server.ctx.prisma, live.grantId);
    expect((await mcp(toolsList, bearer(live.token))).status).toBe(401);
  });
});

describe("WWW-Authenticate on 401: OAuth discovery only for requests without an API key", () => {
  it("no credential: resource_metadata of the resource and the API scopes; the detail names both credentials", async () => {
    const rest = await t.request("GET", "/v1/ext/items", undefined, null);
    expect(rest.status).toBe(401);
    expect(rest.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${prm("/v1/ext")}", scope="${ALL_SCOPES}"`);
    const atMcp = await mcp(toolsList, {});
    expect(atMcp.status).toBe(401);
    expect(atMcp.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${prm("/v1/ext/mcp")}", scope="${ALL_SCOPES}"`);
    const told = "Send an API key (x-api-key header, or Authorization: Bearer) or an OAuth access token (Authorization: Bearer).";
    expect(rest.body).toMatchObject({ code: "invalid_api_key", detail: told });
    expect(rest.body.token_error).toBeUndefined();
    expect(await atMcp.json()).toMatchObject({ code: "invalid_api_key", detail: told });
  });

  it("an API key, valid or not, is never sent into discovery", async () => {
    const badKeys: Record<string, string>[] = [{ "x-api-key": "sl_wrong" }, { "x-api-key": "" }, { authorization: "Bearer sl_abcdefgh_notARealSecret" }];
    for (const headers of badKeys) {
      const rest = await t.request("GET", "/v1/ext/items", undefined, null, headers);
      expect(rest.status).toBe(401);
      expect(rest.headers.get("www-authenticate")).toBeNull();
      const atMcp = await mcp(toolsList, headers);
      expect(atMcp.status).toBe(401);
      const challenge = atMcp.headers.get("www-authenticate")!;
      expect(challenge).toMatch(/^Bearer realm="Stageline"/);
      expect(challenge).not.toContain("resource_metadata");
    }
    // A valid key missing a scope: 403 with the problem alone, no challenge.
    const { key } = await t.newKey(["items:read"]);
    const refused = await t.request("GET", "/v1/ext/tasks", undefined, key);
    expect(refused.status).toBe(403);
    expect(refused.headers.get("www-authenticate")).toBeNull();
    // x-api-key wins over a Bearer token sent beside it.
    const { token: tok } = await token({ scope: "items:read" });
    const both = await t.request("GET", "/v1/ext/me", undefined, t.apiKey, bearer(tok));
    expect(both.body.credential).toEqual({ type: "key", app: null });
  });

  it("a valid API key as Authorization: Bearer works on the REST API as on the MCP endpoint", async () => {
    const res = await t.request("GET", "/v1/ext/me", undefined, null, bearer(t.apiKey));
    expect(res.status).toBe(200);
    expect(res.body.credential).toEqual({ type: "key", app: null });
  });

  it("405 is still decided before authentication", async () => {
    const res = await fetch(`${t.url}/v1/ext/me`, { method: "DELETE", headers: bearer("not-a-token") });
    expect(res.status).toBe(405);
  });
});

describe("Protected Resource Metadata (RFC 9728)", () => {
  it("describes the MCP endpoint and the REST API, publicly", async () => {
    for (const [path, resource, name] of [
      ["/v1/ext/mcp", `${origin}/v1/ext/mcp`, "Stageline MCP server"],
      ["/v1/ext", `${origin}/v1/ext`, "Stageline API"],
    ] as const) {
      const res = await fetch(prm(path));
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      expect(await res.json()).toEqual({
        resource,
        authorization_servers: [origin],
        scopes_supported: [...SCOPES],
        bearer_methods_supported: ["header"],
        resource_name: name,
      });
    }
    expect((await fetch(prm("/v1/ext/mcp"), { method: "POST" })).status).toBe(405);
  });
});

describe("development mode follows the loopback host the client used (issue 39 item 6)", () => {
  /** The same server as `localhost` (the test server listens on 127.0.0.1; `localhost` resolves to it). */
  const local = () => origin.replace("//127.0.0.1:", "//localhost:");

  it("Protected Resource Metadata and the 401 challenge name the origin the request addressed", async () => {
    expect(origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    for (const base of [origin, local()]) {
      const res = await fetch(`${base}/.well-known/oauth-protected-resource/v1/ext/mcp`);
      expect(await res.json()).toMatchObject({ resource: `${base}/v1/ext/mcp`, authorization_servers: [base] });
      const challenge = (await fetch(`${base}/v1/ext/mcp`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).headers.get("www-authenticate");
      expect(challenge).toBe(`Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/v1/ext/mcp", scope="${ALL_SCOPES}"`);
    }
  });

  it("a token issued through either name is good for its resource through both, and still refused at the other resource", async () => {
    const viaLocal = await token({ resource: "mcp", origin: local() });
    const viaLoopback = await token({ resource: "mcp" });
    for (const base of [origin, local()]) {
      for (const tok of [viaLocal.token, viaLoopback.token]) {
        const res = await fetch(`${base}/v1/ext/mcp`, {
          method: "POST",
          headers: { ...bearer(tok), "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
          body: JSON.stringify(toolsList),
        });
        expect(res.status).toBe(200);
      }
      const atRest = await fetch(`${base}/v1/ext/me`, { headers: bearer(viaLocal.token) });
      expect(atRest.status).toBe(401);
      // Told as the resource it addressed.
      expect(atRest.headers.get("www-authenticate")).toContain(`issued for resource ${local()}/v1/ext/mcp, not for ${base}/v1/ext.`);
    }
  });

  it("any other Host gets the default origin; PUBLIC_URL, or production mode, fixes the origin", async () => {
    const ask = async (base: string, host: string) => {
      const res = await new Promise<string>((resolve, reject) => {
        const req = http.get(`${base}/.well-known/oauth-protected-resource/v1/ext`, { headers: { host } }, (r) => {
          let body = "";
          r.on("data", (c: Buffer) => (body += c));
          r.on("end", () => resolve(body));
        });
        req.on("error", reject);
      });
      return (JSON.parse(res) as { resource: string }).resource;
    };
    const port = new URL(origin).port;
    expect(await ask(origin, `localhost:${port}`)).toBe(`${local()}/v1/ext`);
    expect(await ask(origin, `LOCALHOST:${port}`)).toBe(`${local()}/v1/ext`);
    for (const host of ["evil.example", `evil.example:${port}`, "localhost:1", "localhost", `[::1]:${port}`]) expect(await ask(origin, host)).toBe(`${origin}/v1/ext`);
    // The same app on a port of its own, whose own URL is `http://127.0.0.1:<port>`, in another configuration.
    const answers = async (config: Partial<typeof t.server.ctx.config>) => {
      let listening = "";
      const publicOrigin = () => config.publicUrl ?? listening;
      const server = http.createServer(createApp({ ...t.server.ctx, config: { ...t.server.ctx.config, ...config }, publicOrigin }));
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const other = (server.address() as AddressInfo).port;
      listening = `http://127.0.0.1:${other}`;
      try {
        return { viaLocalhost: await ask(listening, `localhost:${other}`), viaLoopback: await ask(listening, `127.0.0.1:${other}`), listening };
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    };
    const dev = await answers({ mode: "development" });
    expect(dev).toEqual({ viaLocalhost: `${dev.listening.replace("127.0.0.1", "localhost")}/v1/ext`, viaLoopback: `${dev.listening}/v1/ext`, listening: dev.listening });
    const prod = await answers({ mode: "production" });
    expect(prod).toEqual({ viaLocalhost: `${prod.listening}/v1/ext`, viaLoopback: `${prod.listening}/v1/ext`, listening: prod.listening });
    const pinned = await answers({ mode: "development", publicUrl: "https://stageline.test" });
    expect([pinned.viaLocalhost, pinned.viaLoopback]).toEqual(["https://stageline.test/v1/ext", "https://stageline.test/v1/ext"]);
  });
});

describe("per-grant rate limit", () => {
  it("60 per window per grant, independent of the company's API keys and of other grants; tokens of one grant share it", async () => {
    const first = await token({ scope: "items:read" });
    const second = await token({ scope: "items:read", grantId: first.grantId, clientId: first.clientId });
    const otherGrant = await token({ scope: "items:read" });
    const { key } = await t.newKey();
    // Start well inside a fixed window so all 65 counted requests (under a second) fall into the same one.
    await awayFromWindowEnd(t.server.ctx.config.rateLimitWindowSeconds * 1000, 15_000);
    expect((await t.request("GET", "/v1/ext/me", undefined, key)).headers.get("ratelimit-remaining")).toBe("59");
    let last;
    for (let i = 0; i < 60; i++) {
      last = await withToken("GET", "/v1/ext/me", i % 2 ? first.token : second.token);
      expect(last.status).toBe(200);
    }
    expect(last!.headers.get("ratelimit-limit")).toBe("60");
    expect(last!.headers.get("ratelimit-remaining")).toBe("0");
    const limited = await withToken("GET", "/v1/ext/me", first.token);
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe("rate_limited");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    const limitedSecond = await withToken("GET", "/v1/ext/me", second.token);
    expect(limitedSecond.status).toBe(429);
    // The key, and another grant, are counted on their own.
    const keyed = await t.request("GET", "/v1/ext/me", undefined, key);
    expect(keyed.status).toBe(200);
    expect(keyed.headers.get("ratelimit-remaining")).toBe("58");
    const other = await withToken("GET", "/v1/ext/me", otherGrant.token);
    expect(other.headers.get("ratelimit-remaining")).toBe("59");
    const counter = await t.server.ctx.prisma.rateLimitWindow.findUniqueOrThrow({ where: { key: `grant:${first.grantId}` } });
    expect(counter.hits).toBe(62); // the two refused requests count too, as for keys
  });
});

describe("the grant's last_used_at", () => {
  it("is set by the first request and written at most once a minute after", async () => {
    const { token: tok, grantId } = await token();
    const lastUsed = async () => (await t.server.ctx.prisma.oAuthRecord.findUniqueOrThrow({ where: { model_id: { model: "Grant", id: grantId } } })).lastUsedAt;
    expect(await lastUsed()).toBeNull();
    await withToken("GET", "/v1/ext/me", tok);
    const first = await lastUsed();
    expect(first).toBeInstanceOf(Date);
    expect(Math.abs(first!.getTime() - Date.now())).toBeLessThan(10_000);
    for (let i = 0; i < 3; i++) await withToken("GET", "/v1/ext/me", tok);
    expect(await lastUsed()).toEqual(first);
    // Stored as older than a minute (another process wrote it then): the next request writes it again.
    const old = new Date(Date.now() - 120_000);
    await t.server.ctx.prisma.oAuthRecord.update({ where: { model_id: { model: "Grant", id: grantId } }, data: { lastUsedAt: old } });
    await withToken("GET", "/v1/ext/me", tok);
    expect((await lastUsed())!.getTime()).toBeGreaterThan(old.getTime() + 60_000);
  });
});

describe("request logs", () => {
  it("never contain an access token, whatever the answer", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logger = pino({ level: "info" }, sink);
    const app = createApp({ ...t.server.ctx, logger });
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const rest = await token({ scope: "items:read" });
      const mcpToken = await token({ resource: "mcp", scope: "items:read" });
      const expired = await token({ expiresIn: -1 });
      const h = (tok: string) => ({ ...bearer(tok), "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" });
      await fetch(`${url}/v1/ext/me`, { headers: h(rest.token) });
      await fetch(`${url}/v1/ext/tasks`, { headers: h(rest.token) }); // 403
      await fetch(`${url}/v1/ext/me`, { headers: h(expired.token) }); // 401
      await fetch(`${url}/v1/ext/me`, { headers: h(mcpToken.token) }); // 401: wrong resource
      await fetch(`${url}/v1/ext/items/nope`, { headers: h(rest.token) }); // 404
      await fetch(`${url}/v1/ext/mcp`, { method: "POST", headers: h(mcpToken.token), body: JSON.stringify(toolsList) });
      await fetch(`${url}/v1/ext/me?access_token=${rest.token}`);
      const output = lines.join("");
      expect(output).toContain("/v1/ext/me");
      for (const secret of [rest.token, mcpToken.token, expired.token, rest.recordId]) expect(output).not.toContain(secret);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

// Two processes on one database need PostgreSQL: the embedded PGlite belongs to the one process that opened it.
// This block is defined only in the PostgreSQL pass (TEST_DATABASE_URL).
if (process.env.TEST_DATABASE_URL) {
  describe("two server processes on one PostgreSQL database", () => {
    const publicUrl = "https://stageline.test";
    const pair = useProcessPair({ RATE_LIMIT_PER_MINUTE: "10000", PUBLIC_URL: publicUrl, LOG_LEVEL: "info" });

    it("a token written once is accepted by both; revoked, refused by both; the grant's limit is shared; never logged", async () => {
      const db = await openDatabase({ databaseUrl: pair.databaseUrl, dataDir: "memory://" });
      try {
        const company = await db.prisma.company.findFirstOrThrow();
        const rest = await issueAccessToken(db.prisma, { companyId: company.id, scope: "items:read", resource: "rest", origin: publicUrl });
        const mcpToken = await issueAccessToken(db.prisma, { companyId: company.id, scope: "items:read", resource: "mcp", origin: publicUrl, grantId: rest.grantId, clientId: rest.clientId });
        const remaining: number[] = [];
        // The grant's requests below in one fixed window of the processes' limit (the default; aligned to the clock).
        await awayFromWindowEnd(RATE_LIMIT.windowSeconds * 1000, 10_000);
        for (const server of [pair.a, pair.b, pair.a]) {
          const me = await fetch(`${server.url}/v1/ext/me`, { headers: bearer(rest.token) });
          expect(me.status).toBe(200);
          remaining.push(Number(me.headers.get("ratelimit-remaining")));
          expect(((await me.json()) as { credential: { type: string } }).credential.type).toBe("oauth");
          const listed = await fetch(`${server.url}/v1/ext/mcp`, {
            method: "POST",
            headers: { ...bearer(mcpToken.token), "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
            body: JSON.stringify(toolsList),
          });
          expect(listed.status).toBe(200);
        }
        // One counter for the grant across both processes (REST and MCP calls of the grant alike).
        expect(remaining[1]! - remaining[2]!).toBe(2);
        await revokeGrant(db.prisma, rest.grantId);
        for (const server of [pair.a, pair.b]) expect((await fetch(`${server.url}/v1/ext/me`, { headers: bearer(rest.token) })).status).toBe(401);
        for (const server of [pair.a, pair.b]) {
          expect(server.output()).toContain("/v1/ext/me");
          expect(server.output()).not.toContain(rest.token);
          expect(server.output()).not.toContain(mcpToken.token);
        }
      } finally {
        await db.close();
      }
    }, 60_000); // up to 10 s waiting for the next window
  });
}

/**
 * Issue 26: the MCP endpoint /v1/ext/mcp (Streamable HTTP, stateless) of a real server, driven by the SDK's own
 * client (CONTRACT "MCP server"): the shared conformance suite (conformance.ts), plus what only HTTP has: 401 with
 * WWW-Authenticate without a key, 403 for a browser Origin not in MCP_ALLOWED_ORIGINS, both protocol eras
 * (2026-07-28 and a 2025 revision), options as query parameters or headers, and the key's rate limit as a
 * `rate_limited` tool error. PGlite by default; PostgreSQL with TEST_DATABASE_URL.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { awayFromWindowEnd } from "../../server/test/helpers/fixed-window";
import { startTestServerWithRateLimit, type TestServer } from "../../server/test/helpers/test-server";
import { DEFAULT_TOOL_NAMES, call, conformanceSuite, problemOf, type Connect } from "./conformance";

const ALLOWED_ORIGIN = "https://agent.example.com";

/** A client over HTTP: the key as `Authorization: Bearer`, read-only as a header, toolsets as a query parameter. */
function httpConnect(t: TestServer, negotiation?: { pin: string }): Connect {
  return async (apiKey, options = {}) => {
    const url = new URL(`${t.url}/v1/ext/mcp`);
    if (options.toolsets) url.searchParams.set("toolsets", options.toolsets);
    const headers: Record<string, string> = { authorization: `Bearer ${apiKey}` };
    if (options.readOnly) headers["x-mcp-readonly"] = "true";
    const client = new Client({ name: "conformance", version: "1.0.0" }, negotiation ? { versionNegotiation: { mode: negotiation } } : {});
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
    return client;
  };
}

/** A raw JSON-RPC POST to the endpoint. */
function post(t: TestServer, body: unknown, headers: Record<string, string> = {}, query = ""): Promise<Response> {
  return fetch(`${t.url}/v1/ext/mcp${query}`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify(body),
  });
}

/** The JSON-RPC message of an answer: a JSON body, or the first `data:` of an SSE body (the 2025 stateless leg). */
async function messageOf(res: Response): Promise<any> {
  const text = await res.text();
  if (!(res.headers.get("content-type") ?? "").includes("text/event-stream")) return JSON.parse(text);
  const data = text.split("\n").find((line) => line.startsWith("data:"));
  return JSON.parse(data!.slice("data:".length));
}

const initialize = (protocolVersion: string) => ({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion, capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

let t: TestServer;
beforeAll(async () => {
  t = await startTestServerWithRateLimit(100_000, { mcpAllowedOrigins: [ALLOWED_ORIGIN] });
});
afterAll(async () => {
  await t?.close();
});

describe("over Streamable HTTP, protocol 2025 (the SDK client's default)", () => {
  conformanceSuite(() => ({ t, connect: httpConnect(t) }));
});

describe("over Streamable HTTP, protocol 2026-07-28", () => {
  it("lists and calls tools with the pinned modern revision", async () => {
    const client = await httpConnect(t, { pin: "2026-07-28" })(t.apiKey);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(DEFAULT_TOOL_NAMES);
      const result = await call(client, "describe_pipelines");
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent!.pipelines).toHaveLength(1);
    } finally {
      await client.close();
    }
  });
});

describe("the HTTP edge", () => {
  it("negotiates an older revision a client asks for (2025-03-26)", async () => {
    const res = await post(t, initialize("2025-03-26"), { "x-api-key": t.apiKey });
    expect(res.status).toBe(200);
    const body = await messageOf(res);
    expect(body.result).toMatchObject({ protocolVersion: "2025-03-26", serverInfo: { name: "stageline" }, capabilities: { tools: {} } });
  });

  it("answers 401 with WWW-Authenticate without a key or with a bad one, and never echoes the key", async () => {
    // Without any credential the challenge starts OAuth discovery (issue 32: resource_metadata, server/test/oauth-resource.test.ts);
    // a request with an API key, valid or not, is never sent into it.
    const none = await post(t, initialize("2025-06-18"), {});
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(/^Bearer resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource\/v1\/ext\/mcp"/);
    const attempts: Record<string, string>[] = [{ authorization: "Bearer sl_not_a_key_1234567890" }, { "x-api-key": "sl_wrong" }];
    for (const headers of attempts) {
      const res = await post(t, initialize("2025-06-18"), headers);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer realm="Stageline"/);
      const text = await res.text();
      expect(JSON.parse(text)).toMatchObject({ code: "invalid_api_key" });
      expect(text).not.toContain("sl_not_a_key");
    }
  });

  it("answers 403 to a browser Origin not in MCP_ALLOWED_ORIGINS, and serves an allowed one", async () => {
    const bad = await post(t, initialize("2025-06-18"), { "x-api-key": t.apiKey, origin: "https://evil.example" });
    expect(bad.status).toBe(403);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(/Origin not allowed/);
    const good = await post(t, initialize("2025-06-18"), { "x-api-key": t.apiKey, origin: ALLOWED_ORIGIN });
    expect(good.status).toBe(200);
  });

  it("in test (as in development) mode serves the server's own loopback origin, and refuses another local port", async () => {
    const port = new URL(t.url).port;
    for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`]) {
      expect((await post(t, initialize("2025-06-18"), { "x-api-key": t.apiKey, origin })).status).toBe(200);
    }
    expect((await post(t, initialize("2025-06-18"), { "x-api-key": t.apiKey, origin: "http://localhost:5173" })).status).toBe(403);
  });

  it("takes read_only and toolsets as query parameters or headers, and refuses a bad value", async () => {
    const list = { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} };
    const names = async (query: string, headers: Record<string, string> = {}) => {
      const res = await post(t, list, { "x-api-key": t.apiKey, "mcp-protocol-version": "2025-06-18", ...headers }, query);
      return { status: res.status, body: await messageOf(res) };
    };
    const q = await names("?read_only=true&toolsets=tasks");
    expect(q.body.result.tools.map((x: { name: string }) => x.name)).toEqual(["list_tasks", "get_task"]);
    const h = await names("", { "x-mcp-readonly": "true", "x-mcp-toolsets": "webhooks" });
    expect(h.body.result.tools.map((x: { name: string }) => x.name)).toEqual(["list_webhooks", "list_webhook_deliveries"]);
    const bad = await names("?toolsets=everything");
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: "validation_failed" });
  });
});

describe("a request that is one tools/call (its per-request server registers only the called tool)", () => {
  const callBody = (name: string, args: Record<string, unknown> = {}) => ({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name, arguments: args } });
  const answer = async (name: string, query = "") =>
    messageOf(await post(t, callBody(name), { "x-api-key": t.apiKey, "mcp-protocol-version": "2025-06-18" }, query));

  it("calls the named tool, and answers a tool the options leave out exactly as an unknown one", async () => {
    const served = await answer("describe_pipelines");
    expect(served.result.isError).toBeFalsy();
    expect(served.result.structuredContent.pipelines).toHaveLength(1);
    // update_note is off unless toolsets names note_edits; with it, the same call reaches the tool (and its 404).
    const leftOut = await answer("update_note");
    const unknown = await answer("no_such_tool");
    const unnamed = (message: unknown) => JSON.parse(JSON.stringify(message).replaceAll("update_note", "<tool>").replaceAll("no_such_tool", "<tool>"));
    expect(unnamed(leftOut)).toEqual(unnamed(unknown));
    expect(JSON.stringify(leftOut)).toMatch(/update_note/);
    const reached = messageOf(await post(t, callBody("update_note", { note_id: "missing", body: "x" }), { "x-api-key": t.apiKey, "mcp-protocol-version": "2025-06-18" }, "?toolsets=note_edits"));
    expect((await reached).result).toMatchObject({ isError: true });
    expect(problemOf((await reached).result)).toMatchObject({ code: "not_found" });
  });

  it("still lists every tool the key may use for tools/list", async () => {
    const res = await post(t, { jsonrpc: "2.0", id: 8, method: "tools/list", params: {} }, { "x-api-key": t.apiKey, "mcp-protocol-version": "2025-06-18" });
    expect((await messageOf(res)).result.tools.map((x: { name: string }) => x.name)).toEqual(DEFAULT_TOOL_NAMES);
  });
});

describe("the key's rate limit", () => {
  let limited: TestServer;
  beforeAll(async () => {
    limited = await startTestServerWithRateLimit(5);
  });
  afterAll(async () => {
    await limited?.close();
  });

  it("is shared with the REST API, and over it a tool call is an isError result that says when to retry", async () => {
    // The limit counts in windows aligned to the clock's minute (server/src/http/rate-limit.ts): six calls that
    // straddle a window's end would all pass. Late in a window, start in the next one.
    await awayFromWindowEnd(limited.server.ctx.config.rateLimitWindowSeconds * 1000, 20_000);
    const client = await httpConnect(limited)(limited.apiKey);
    try {
      const results = [];
      for (let i = 0; i < 6; i++) results.push(await call(client, "describe_pipelines"));
      const firstError = results.findIndex((r) => r.isError);
      expect(firstError).toBeGreaterThan(0); // the first calls went through, within the limit
      for (const r of results.slice(firstError)) {
        const problem = problemOf(r);
        expect(problem).toMatchObject({ code: "rate_limited", retry_after_seconds: expect.any(Number) });
        expect(problem.detail).toMatch(/Retry after \d+ seconds/);
      }
      // One window for the key: the REST API is over the limit too.
      expect((await limited.request("GET", "/v1/ext/pipelines")).status).toBe(429);
    } finally {
      await client.close();
    }
  }, 90_000); // up to 20 s waiting for the next window, then the calls
});

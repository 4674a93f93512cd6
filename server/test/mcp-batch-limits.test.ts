/**
 * The MCP endpoint as a hostile client uses it (docs/mcp-security.md; CONTRACT "MCP server": every call counts against
 * the key's rate limit; "HTTP semantics, order of checks"): JSON-RPC batches are refused under the revisions without
 * batching (2025-06-18 and later), an allowed batch (2025-03-26, or no MCP-Protocol-Version header) never does more
 * than the window has left and moves `RateLimit-Remaining` by what it consumed, `405` of `/v1/ext/mcp` comes before
 * the key and in the problem format; on PostgreSQL, two server processes sharing one schema cannot exceed the limit
 * together. PGlite by default; PostgreSQL with TEST_DATABASE_URL. The window is one hour (RATE_LIMIT_WINDOW_SECONDS)
 * and each test starts at least 30 s before its end (the windows are aligned to the clock), so that no test
 * straddles a window's end and sees its counts split.
 */
import { query } from "../src/db/sql";
import { awayFromWindowEnd } from "./helpers/fixed-window";
import { useProcessPair } from "./helpers/process-pair";
import { startTestServer, type TestServer } from "./helpers/test-server";

const LIMIT = 60;
const WINDOW_SECONDS = 3_600;
const MCP = "/v1/ext/mcp";

/** A raw JSON-RPC POST to the MCP endpoint of `baseUrl`. */
function post(baseUrl: string, body: unknown, headers: Record<string, string>): Promise<Response> {
  return fetch(`${baseUrl}${MCP}`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify(body),
  });
}

/** Every JSON-RPC message of an answer: a JSON body (one message or an array), or each `data:` of an SSE body. */
async function messagesOf(res: Response): Promise<any[]> {
  const text = await res.text();
  if (!(res.headers.get("content-type") ?? "").includes("text/event-stream")) {
    const body = JSON.parse(text);
    return Array.isArray(body) ? body : [body];
  }
  return text
    .split("\n")
    .filter((line) => line.startsWith("data:") && line.length > "data:".length + 1)
    .map((line) => JSON.parse(line.slice("data:".length)));
}

/** `n` tools/call messages of `name` with `args(i)`, ids 1..n. */
function toolCalls(n: number, name: string, args: (i: number) => Record<string, unknown>): unknown[] {
  return Array.from({ length: n }, (_, i) => ({ jsonrpc: "2.0", id: i + 1, method: "tools/call", params: { name, arguments: args(i) } }));
}

/** The answers to tools/call messages: successes and `rate_limited` problems. */
function tally(messages: any[]): { ok: number; rateLimited: number; retryAfter: number[] } {
  let ok = 0;
  let rateLimited = 0;
  const retryAfter: number[] = [];
  for (const m of messages) {
    expect(m.error).toBeUndefined();
    if (!m.result.isError) {
      ok++;
      continue;
    }
    const problem = JSON.parse(m.result.content[0].text);
    expect(problem.code).toBe("rate_limited");
    retryAfter.push(problem.retry_after_seconds);
    rateLimited++;
  }
  return { ok, rateLimited, retryAfter };
}

const remainingOf = (res: Response): number => Number(res.headers.get("ratelimit-remaining"));

/** Each test counts against one window: late in one (under 30 s left, 1 hour in 120), it starts in the next. */
const inOneWindow = () => beforeEach(() => awayFromWindowEnd(WINDOW_SECONDS * 1000, 30_000), 60_000);

describe("the MCP endpoint's rate limit against batches (one server, 60 per window)", () => {
  let t: TestServer;
  let itemCount: (companyId: string) => Promise<number>;
  beforeAll(async () => {
    process.env.RATE_LIMIT_PER_MINUTE = String(LIMIT);
    try {
      t = await startTestServer({ rateLimitWindowSeconds: WINDOW_SECONDS });
    } finally {
      delete process.env.RATE_LIMIT_PER_MINUTE;
    }
    itemCount = async (companyId) =>
      Number((await query<{ n: number }>(t.server.ctx.prisma, `SELECT count(*)::int AS n FROM items WHERE company_id = $1`, [companyId]))[0]!.n);
  });
  afterAll(async () => {
    await t?.close();
  });
  inOneWindow();

  const stageId = () => t.pipeline.stages[0]!.id;
  const createArgs = (i: number) => ({ pipeline_id: t.pipeline.id, stage_id: stageId(), name: `Batch ${i}` });

  it.each(["2025-06-18", "2025-11-25", "2026-07-28"])("refuses a batch under %s: 400, JSON-RPC -32600 without id, nothing written", async (revision) => {
    const company = await t.newCompany(`Refused ${revision}`);
    const res = await post(t.url, toolCalls(10, "create_item", () => ({ pipeline_id: company.pipeline.id, stage_id: company.pipeline.stages[0]!.id, name: "x" })), {
      "x-api-key": company.apiKey,
      "mcp-protocol-version": revision,
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
    expect(body.error.message).toMatch(/batches are not supported/);
    expect(await itemCount(company.companyId)).toBe(0);
    expect(remainingOf(res)).toBe(LIMIT - 1); // the HTTP request itself, as any request
  });

  it("with one unit left, a 2025-03-26 batch of ten create_item makes exactly one item; the nine others answer rate_limited", async () => {
    const company = await t.newCompany("One left");
    const pipeline = company.pipeline;
    const first = await post(t.url, { jsonrpc: "2.0", id: 1, method: "ping" }, { "x-api-key": company.apiKey, "mcp-protocol-version": "2025-03-26" });
    expect(remainingOf(first)).toBe(LIMIT - 1);
    // Spend the window down to one unit (as 58 more requests would).
    await query(t.server.ctx.prisma, `UPDATE rate_limit_windows SET hits = $2 WHERE key IN (SELECT 'key:' || id FROM api_keys WHERE company_id = $1)`, [
      company.companyId,
      LIMIT - 1,
    ]);
    const batch = toolCalls(10, "create_item", (i) => ({ pipeline_id: pipeline.id, stage_id: pipeline.stages[0]!.id, name: `Batch ${i}` }));
    const res = await post(t.url, batch, { "x-api-key": company.apiKey, "mcp-protocol-version": "2025-03-26" });
    expect(res.status).toBe(200);
    const messages = await messagesOf(res);
    expect(messages).toHaveLength(10);
    const counts = tally(messages);
    expect(counts).toMatchObject({ ok: 1, rateLimited: 9 });
    for (const s of counts.retryAfter) expect(s).toBeGreaterThan(0);
    expect(await itemCount(company.companyId)).toBe(1);
    expect(remainingOf(res)).toBe(0);
  });

  it("a batch without MCP-Protocol-Version (taken as 2025-03-26) of 90 get_item runs 60 and moves Remaining to 0; the key is then over the limit", async () => {
    const { key } = await t.newKey();
    const created = await t.request("POST", "/v1/ext/items", createArgs(0));
    expect(created.status).toBe(201);
    const res = await post(t.url, toolCalls(90, "get_item", () => ({ item_id: created.body.item_id })), { "x-api-key": key });
    expect(res.status).toBe(200);
    expect(tally(await messagesOf(res))).toMatchObject({ ok: LIMIT, rateLimited: 90 - LIMIT });
    expect(remainingOf(res)).toBe(0);
    expect((await t.request("GET", "/v1/ext/pipelines", undefined, key)).status).toBe(429);
  });

  it("a batch moves Remaining by one per request message (tools/list and ping included, notifications free)", async () => {
    const { key } = await t.newKey();
    const item = (await t.request("POST", "/v1/ext/items", createArgs(1))).body;
    const getItem = () => ({ item_id: item.item_id });
    const batch = [
      ...toolCalls(20, "get_item", getItem),
      { jsonrpc: "2.0", id: 100, method: "tools/list", params: {} },
      { jsonrpc: "2.0", id: 101, method: "ping" },
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 999 } },
    ];
    const res = await post(t.url, batch, { "x-api-key": key, "mcp-protocol-version": "2025-03-26" });
    expect(res.status).toBe(200);
    const messages = await messagesOf(res);
    expect(messages).toHaveLength(22);
    expect(tally(messages.filter((m) => m.id <= 20))).toMatchObject({ ok: 20, rateLimited: 0 });
    expect(remainingOf(res)).toBe(LIMIT - 22);
    // A second batch that asks for more than is left: the window's 38 units and no more.
    const more = await post(t.url, toolCalls(50, "get_item", getItem), { "x-api-key": key, "mcp-protocol-version": "2025-03-26" });
    expect(tally(await messagesOf(more))).toMatchObject({ ok: LIMIT - 22, rateLimited: 50 - (LIMIT - 22) });
    expect(remainingOf(more)).toBe(0);
  });

  it("refuses a batch with an id null before running or reserving anything: it costs one unit (issue 39 item 4)", async () => {
    const company = await t.newCompany("Null id");
    const batch = toolCalls(30, "create_item", (i) => ({ pipeline_id: company.pipeline.id, stage_id: company.pipeline.stages[0]!.id, name: `Null ${i}` }));
    (batch[29] as { id: unknown }).id = null;
    const res = await post(t.url, batch, { "x-api-key": company.apiKey, "mcp-protocol-version": "2025-03-26" });
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
    expect(body.error.message).toMatch(/batch message 29 has the id null/);
    expect(remainingOf(res)).toBe(LIMIT - 1);
    expect(await itemCount(company.companyId)).toBe(0);
    // The window is intact: the next request sees 58 left.
    expect(remainingOf(await post(t.url, { jsonrpc: "2.0", id: 1, method: "ping" }, { "x-api-key": company.apiKey, "mcp-protocol-version": "2025-03-26" }))).toBe(LIMIT - 2);
  });

  it("refuses a batch of 80 create_item sharing id 1 before any call runs: nothing created, one unit (issue 39 item 4)", async () => {
    const company = await t.newCompany("Same id");
    const batch = toolCalls(80, "create_item", (i) => ({ pipeline_id: company.pipeline.id, stage_id: company.pipeline.stages[0]!.id, name: `Same ${i}` })).map((m) => ({ ...(m as object), id: 1 }));
    const res = await post(t.url, batch, { "x-api-key": company.apiKey, "mcp-protocol-version": "2025-03-26" });
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
    expect(body.error.message).toMatch(/batch messages 0 and 1 share the id 1/);
    expect(remainingOf(res)).toBe(LIMIT - 1);
    expect(await itemCount(company.companyId)).toBe(0);
  });

  it.each([
    ["ids 7 and \"7\" (the same id as text)", [{ id: 7 }, { id: "7" }], /share the id "7"/],
    ["a fractional id", [{ id: 1.5 }], /has the id 1\.5/],
    ["an object id", [{ id: { a: 1 } }], /has the id \{"a":1\}/],
    ["a message without jsonrpc", [{ id: 1, jsonrpc: undefined }], /batch message 0 is not a JSON-RPC 2\.0 message/],
    ["initialize beside another message", [{ id: 1, method: "initialize", params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "x", version: "1" } } }, { id: 2 }], /batch message 0 is initialize/],
  ])("refuses a batch with %s before reserving anything", async (_case, overrides, reason) => {
    const { key } = await t.newKey();
    const batch = overrides.map((o) => ({ jsonrpc: "2.0", method: "tools/call", params: { name: "describe_pipelines", arguments: {} }, ...o }));
    const res = await post(t.url, batch, { "x-api-key": key, "mcp-protocol-version": "2025-03-26" });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error).toMatchObject({ code: -32600, message: expect.stringMatching(reason) });
    expect(remainingOf(res)).toBe(LIMIT - 1);
  });

  it("an empty batch is refused and costs one unit", async () => {
    const { key } = await t.newKey();
    const res = await post(t.url, [], { "x-api-key": key, "mcp-protocol-version": "2025-03-26" });
    expect(res.status).toBe(400);
    expect(remainingOf(res)).toBe(LIMIT - 1);
  });

  it("refuses a batch of more than 100 messages before reserving anything", async () => {
    const { key } = await t.newKey();
    const res = await post(t.url, toolCalls(101, "describe_pipelines", () => ({})), { "x-api-key": key, "mcp-protocol-version": "2025-03-26" });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.code).toBe(-32600);
    expect(remainingOf(res)).toBe(LIMIT - 1);
  });

  it("405 for GET, PUT, DELETE comes from the route alone: before the key, problem details with Allow, not counted", async () => {
    const { key } = await t.newKey();
    for (const method of ["GET", "PUT", "DELETE", "PATCH"]) {
      for (const headers of [{}, { "x-api-key": "sl_bad" }, { "x-api-key": key }] as Record<string, string>[]) {
        const res = await fetch(`${t.url}${MCP}`, { method, headers });
        expect(res.status).toBe(405);
        expect(res.headers.get("allow")).toBe("POST");
        expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
        expect(((await res.json()) as any).code).toBe("method_not_allowed");
        expect(res.headers.get("ratelimit-remaining")).toBeNull();
      }
    }
    const options = await fetch(`${t.url}${MCP}`, { method: "OPTIONS" });
    expect(options.status).toBe(204);
    expect(options.headers.get("allow")).toBe("POST");
    // Nothing above counted: the key's first counted request leaves 59.
    expect(remainingOf(await post(t.url, { jsonrpc: "2.0", id: 1, method: "ping" }, { "x-api-key": key, "mcp-protocol-version": "2025-06-18" }))).toBe(LIMIT - 1);
  });
});

// Several processes share one window only on a shared database: this block is defined only in the PostgreSQL pass.
if (process.env.TEST_DATABASE_URL) {
  describe("two server processes on one PostgreSQL schema", () => {
    const pair = useProcessPair({ RATE_LIMIT_PER_MINUTE: String(LIMIT), RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS) });
    inOneWindow();

    it("cannot together run more than the window's 60 tool calls, however the batches interleave", async () => {
      const batch = toolCalls(40, "describe_pipelines", () => ({}));
      const headers = { "x-api-key": pair.apiKey, "mcp-protocol-version": "2025-03-26" };
      const answers = await Promise.all([pair.a, pair.b, pair.a, pair.b].map(async (p) => messagesOf(await post(p.url, batch, headers))));
      const total = answers.map(tally).reduce((sum, c) => ({ ok: sum.ok + c.ok, rateLimited: sum.rateLimited + c.rateLimited }), { ok: 0, rateLimited: 0 });
      expect(total).toEqual({ ok: LIMIT, rateLimited: 4 * 40 - LIMIT });
      const single = await post(pair.b.url, toolCalls(1, "describe_pipelines", () => ({}))[0], headers);
      expect(tally(await messagesOf(single))).toMatchObject({ ok: 0, rateLimited: 1 });
    });
  });
}

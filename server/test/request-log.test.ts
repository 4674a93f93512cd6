/**
 * Request ids and the request log (issue 40; CONTRACT "Request ids and the request log"): `Request-Id` on every
 * response of /v1/ext, /oauth and /console, `request_id` in every problem body; one log entry per authenticated REST
 * request and per MCP tool call with what the contract lists and nothing more (a refused request's body, its query
 * values and its headers leave no trace in a dump of the whole database); one company never reads another's entries;
 * the retention purge; the writer's fairness, bounds and behaviour when the database refuses a batch.
 */
import { consoleOverHttp, createConsoleUser } from "./helpers/console-browser";
import { catalogDump } from "./helpers/database-dump";
import { startTestServer, type TestServer } from "./helpers/test-server";
import { findRequestLogEntry, listRequestLog, type RequestLogEntry } from "../src/db/request-log";
import type { SqlRunner } from "../src/db/sql";
import { FairBuffer } from "../src/services/request-log/fair-buffer";
import { purgeOldRequests } from "../src/services/request-log/retention";
import { startRequestLogWriter } from "../src/services/request-log/writer";
import { createLogger } from "../src/logger";
import type { RequestLogMetrics } from "../src/observability/request-log-metrics";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
}, 60_000);
afterAll(() => t?.close());

const sql = () => t.server.ctx.db.sql;
const flush = () => t.server.ctx.requestLog.flush();

async function entryOf(requestId: string | null, companyId = t.companyId) {
  await flush();
  return findRequestLogEntry(sql(), companyId, requestId!);
}

describe("Request-Id", () => {
  it("every response of /v1/ext, /oauth and /console carries a unique Request-Id", async () => {
    const paths = ["/v1/ext/me", "/v1/ext/nowhere", "/oauth/jwks", "/.well-known/oauth-authorization-server", "/console/sign-in", "/healthz"];
    const ids = new Set<string>();
    for (const path of paths) {
      const res = await fetch(`${t.url}${path}`, { headers: { "x-api-key": t.apiKey } });
      const id = res.headers.get("request-id");
      expect(id).toMatch(/^req_[A-Za-z0-9_-]{22}$/);
      ids.add(id!);
    }
    expect(ids.size).toBe(paths.length);
    // A Request-Id sent by the client is never taken over.
    const sent = await fetch(`${t.url}/v1/ext/me`, { headers: { "x-api-key": t.apiKey, "request-id": "req_chosen_by_the_client" } });
    expect(sent.headers.get("request-id")).not.toBe("req_chosen_by_the_client");
  });

  it("every problem body carries the response's Request-Id as request_id", async () => {
    const answers = [
      await fetch(`${t.url}/v1/ext/items/nope`, { headers: { "x-api-key": t.apiKey } }),
      await fetch(`${t.url}/v1/ext/me`, { headers: { "x-api-key": "sl_wrong" } }),
      await fetch(`${t.url}/v1/ext/items`, { method: "POST", headers: { "x-api-key": t.apiKey, "content-type": "application/json" }, body: "{" }),
      await fetch(`${t.url}/v1/ext/items`, { method: "PUT", headers: { "x-api-key": t.apiKey } }),
    ];
    for (const res of answers) {
      expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      const body = (await res.json()) as { request_id?: string };
      expect(body.request_id).toBe(res.headers.get("request-id"));
    }
  });
});

describe("the request log", () => {
  it("keeps what the contract lists for a REST request: route template, path ids, status, credential, timing, user agent", async () => {
    const created = await t.request("POST", "/v1/ext/items", { name: "Logged", pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id });
    expect(created.status).toBe(201);
    const itemId = (created.body as { item_id: string }).item_id;
    const res = await fetch(`${t.url}/v1/ext/items/${itemId}`, { headers: { "x-api-key": t.apiKey, "user-agent": `Zapier/1.0 ${"x".repeat(400)}` } });
    expect(res.status).toBe(200);
    const entry = await entryOf(res.headers.get("request-id"));
    expect(entry).toMatchObject({
      companyId: t.companyId,
      method: "GET",
      route: "/v1/ext/items/{item_id}",
      pathIds: { item_id: itemId },
      status: 200,
      code: null,
      errorPaths: null,
      credentialType: "key",
      credentialId: t.keyId,
      idempotencyKey: null,
      replayed: false,
    });
    expect(entry!.durationMs).toBeGreaterThanOrEqual(0);
    expect(entry!.rateLimitRemaining).toEqual(expect.any(Number));
    expect(entry!.userAgent!.startsWith("Zapier/1.0 ")).toBe(true);
    expect(entry!.userAgent!.length).toBe(200);
    expect(Math.abs(entry!.at.getTime() - Date.now())).toBeLessThan(60_000);
  });

  it("keeps a problem's code and field paths, never the values, and an Idempotency-Key with its replay", async () => {
    const marker = `s3cr3t-${Date.now()}`;
    const refused = await fetch(`${t.url}/v1/ext/items?search=${marker}-query`, {
      method: "POST",
      headers: { "x-api-key": t.apiKey, "content-type": "application/json", "idempotency-key": "key-refused-1", "x-custom": `${marker}-header` },
      body: JSON.stringify({ pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id, name: 42, fields: { email: `${marker}-body` } }),
    });
    expect(refused.status).toBe(400);
    const first = await entryOf(refused.headers.get("request-id"));
    expect(first).toMatchObject({ status: 400, code: "validation_failed", idempotencyKey: "key-refused-1", replayed: false, route: "/v1/ext/items", pathIds: null });
    expect(first!.errorPaths).toContain("name");
    const again = await fetch(`${t.url}/v1/ext/items`, {
      method: "POST",
      headers: { "x-api-key": t.apiKey, "content-type": "application/json", "idempotency-key": "key-refused-1" },
      body: JSON.stringify({ pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id, name: 42, fields: { email: `${marker}-body` } }),
    });
    const replay = await entryOf(again.headers.get("request-id"));
    expect(replay).toMatchObject({ status: 400, idempotencyKey: "key-refused-1", replayed: again.headers.get("idempotent-replayed") === "true" });
    // The request log keeps nothing of the body, the query or the headers, and the stored idempotent answer (a
    // problem) names fields, never values: a dump of every table shows no trace of the marker.
    const dump = await catalogDump(sql(), t.server.ctx.config.databaseUrl ? t.server.db.schema : undefined);
    expect(dump.tables.some((name) => name.endsWith(".request_log"))).toBe(true);
    expect(dump.text).not.toContain(marker);
  });

  it("logs each MCP tool call under its tool name, and a tool error quotes the request id", async () => {
    const call = async (id: number, name: string, args: unknown) =>
      fetch(`${t.url}/v1/ext/mcp`, {
        method: "POST",
        headers: { "x-api-key": t.apiKey, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
        body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } }),
      });
    const res = await call(1, "get_item", { item_id: "no-such-item" });
    expect(res.status).toBe(200);
    const requestId = res.headers.get("request-id");
    const text = await res.text();
    expect(text).toContain(requestId!);
    const entry = await entryOf(requestId);
    expect(entry).toMatchObject({ method: "MCP", route: "get_item", pathIds: { item_id: "no-such-item" }, status: 404, code: "not_found", credentialId: t.keyId });
  });

  it("one company never reads another's entries", async () => {
    const other = await t.newCompany("Request Log Other Co");
    const mine = await fetch(`${t.url}/v1/ext/me`, { headers: { "x-api-key": t.apiKey } });
    const theirs = await fetch(`${t.url}/v1/ext/me`, { headers: { "x-api-key": other.apiKey } });
    await flush();
    expect(await findRequestLogEntry(sql(), other.companyId, mine.headers.get("request-id")!)).toBeUndefined();
    expect(await findRequestLogEntry(sql(), other.companyId, theirs.headers.get("request-id")!)).toBeDefined();
    const page = await listRequestLog(sql(), other.companyId, {}, null, 100);
    expect(page.map((e) => e.companyId)).toEqual(page.map(() => other.companyId));
    expect(page.some((e) => e.requestId === mine.headers.get("request-id"))).toBe(false);
  });

  it("pages newest first by keyset and filters by status class, credential and route", async () => {
    for (let i = 0; i < 3; i++) await fetch(`${t.url}/v1/ext/items/missing-${i}`, { headers: { "x-api-key": t.apiKey } });
    await flush();
    const first = await listRequestLog(sql(), t.companyId, { statusClass: 4, route: "/v1/ext/items/{item_id}" }, null, 2);
    expect(first).toHaveLength(2);
    expect(first.every((e) => e.status >= 400 && e.status < 500)).toBe(true);
    const last = first[first.length - 1]!;
    const second = await listRequestLog(sql(), t.companyId, { statusClass: 4, route: "/v1/ext/items/{item_id}" }, { at: last.at, id: last.id }, 2);
    expect(second.length).toBeGreaterThan(0);
    for (const e of second) expect(e.at.getTime() < last.at.getTime() || (e.at.getTime() === last.at.getTime() && BigInt(e.id) < BigInt(last.id))).toBe(true);
    expect(await listRequestLog(sql(), t.companyId, { credentialId: "not-a-credential" }, null, 5)).toEqual([]);
  });

  it("the retention purge deletes entries older than REQUEST_LOG_RETENTION_DAYS and keeps the rest", async () => {
    await fetch(`${t.url}/v1/ext/me`, { headers: { "x-api-key": t.apiKey } });
    await flush();
    await sql().query(`update request_log set at = now() - interval '20 days' where id in (select id from request_log where company_id = $1 order by id limit 2)`, [t.companyId]);
    const before = (await sql().query<{ n: number }>(`select count(*)::int as n from request_log where company_id = $1`, [t.companyId]))[0]!.n;
    expect(await purgeOldRequests(sql(), 14)).toBe(2);
    const after = (await sql().query<{ n: number }>(`select count(*)::int as n from request_log where company_id = $1`, [t.companyId]))[0]!.n;
    expect(after).toBe(before - 2);
  });
});

describe("the console's Requests pages", () => {
  it("a member reads the company's requests, finds one by its Request-Id, and never sees another company's", async () => {
    const member = await consoleOverHttp(t.url, await createConsoleUser(t, "member"));
    const res = await fetch(`${t.url}/v1/ext/items/console-missing`, { headers: { "x-api-key": t.apiKey, "user-agent": "<script>alert(1)</script>" } });
    const id = res.headers.get("request-id")!;
    await flush();
    const list = await member.get("/console/requests?status=4");
    expect(list.status).toBe(200);
    expect(list.text).toContain(id);
    expect(list.text).toContain("GET /v1/ext/items/{item_id}");
    const found = await fetch(`${t.url}/console/requests?request_id=${id}`, { redirect: "manual", headers: { cookie: "" } });
    expect([303, 302]).toContain(found.status); // not signed in: to the sign-in page
    const details = await member.get(`/console/requests/${id}`);
    expect(details.status).toBe(200);
    expect(details.text).toContain("not_found");
    expect(details.text).toContain("console-missing");
    expect(details.text).not.toContain("<script>alert(1)</script>");
    const other = await t.newCompany("Requests Page Other Co");
    const theirs = await fetch(`${t.url}/v1/ext/me`, { headers: { "x-api-key": other.apiKey } });
    await flush();
    expect((await member.get(`/console/requests/${theirs.headers.get("request-id")}`)).status).toBe(404);
    expect((await member.get("/console/requests")).text).not.toContain(theirs.headers.get("request-id")!);
    expect((await member.get("/console/requests?request_id=not-an-id")).text).toContain('aria-invalid="true"');
  });
});

describe("the request log's writer", () => {
  const entry = (companyId: string, n: number): RequestLogEntry => ({
    requestId: `req_${companyId}_${n}`,
    companyId,
    at: new Date(),
    method: "GET",
    route: "/v1/ext/me",
    pathIds: null,
    status: 200,
    code: null,
    errorPaths: null,
    durationMs: 1,
    credentialType: "key",
    credentialId: "k",
    credentialName: "k",
    idempotencyKey: null,
    replayed: false,
    rateLimitRemaining: null,
    userAgent: null,
  });

  it("takes batches round-robin, so one company's volume never delays another's entries; bounded per company and in all", () => {
    const buffer = new FairBuffer<string>({ perCompany: 1000, total: 1500 });
    for (let i = 0; i < 1000; i++) expect(buffer.add("busy", `busy-${i}`)).toBeNull();
    expect(buffer.add("busy", "busy-over")).toBe("company_full");
    expect(buffer.add("quiet", "quiet-0")).toBeNull();
    expect(buffer.add("quiet", "quiet-1")).toBeNull();
    const batch = buffer.take(4);
    expect(batch).toEqual(["busy-0", "quiet-0", "busy-1", "quiet-1"]);
    expect(buffer.size).toBe(998);
    for (let i = 0; i < 502; i++) expect(buffer.add(`c${i}`, "x")).toBeNull();
    expect(buffer.add("late", "x")).toBe("buffer_full");
    expect(buffer.size).toBe(1500);
  });

  it("never fails or blocks the caller when the database refuses a batch: the batch is dropped and counted", async () => {
    const counts = { written: 0, dropped: {} as Record<string, number> };
    const metrics: RequestLogMetrics = { written: (n) => (counts.written += n), dropped: (r, n) => (counts.dropped[r] = (counts.dropped[r] ?? 0) + n) };
    let down = true;
    const failing: SqlRunner = {
      concurrent: false,
      query: async <T>(text: string, params?: readonly unknown[]) => {
        if (down) throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
        return t.server.ctx.db.sql.query<T>(text, params);
      },
      transaction: () => Promise.reject(new Error("unused")),
    };
    const writer = startRequestLogWriter(failing, metrics, createLogger("silent"), { flushIntervalMs: 60_000, limits: { perCompany: 3, total: 10 } });
    for (let i = 0; i < 5; i++) writer.record(entry(t.companyId, i));
    expect(counts.dropped.company_full).toBe(2);
    await writer.flush();
    expect(counts.dropped.database).toBe(3);
    expect(counts.written).toBe(0);
    down = false;
    writer.record(entry(t.companyId, 99));
    await writer.close();
    expect(counts.written).toBe(1);
    expect(await findRequestLogEntry(t.server.ctx.db.sql, t.companyId, `req_${t.companyId}_99`)).toBeDefined();
  });
});

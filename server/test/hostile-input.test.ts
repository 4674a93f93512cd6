/**
 * Regression tests for the defects a hostile-input probe found (issue 12, "Hostile input and faults"): every answer is
 * a bounded problem+json of the contract, never a 500, never an HTML page.
 */
import { request as httpRequest } from "node:http";
import net from "node:net";
import zlib from "node:zlib";
import { startTestServer, startTestServerWithRateLimit, type TestResponse, type TestServer } from "./helpers/test-server";

/** Problem bodies stay small whatever the input (issue 12: bound the size of every error body). */
const MAX_PROBLEM_BYTES = 64 * 1024;

function expectProblem(res: TestResponse, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ status, code });
  expect(JSON.stringify(res.body).length).toBeLessThan(MAX_PROBLEM_BYTES);
}

/** A raw request (for bodies and headers fetch() will not send as given). */
function raw(url: string, opts: { method: string; path: string; headers?: Record<string, string>; body?: Buffer }): Promise<TestResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url + opts.path, { method: opts.method, headers: opts.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          /* keep text */
        }
        const headers = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === "string") headers.set(k, v);
        resolve({ status: res.statusCode ?? 0, headers, body });
      });
    });
    req.on("error", reject);
    req.end(opts.body);
  });
}

describe("hostile input", () => {
  let t: TestServer;
  let createBody: Record<string, unknown>;
  beforeAll(async () => {
    t = await startTestServerWithRateLimit(100_000);
    const stage = t.pipeline.stages[0]!;
    createBody = { name: "Probe", pipeline_id: t.pipeline.id, stage_id: stage.id, status_id: stage.statuses[0]!.id };
  });
  afterAll(async () => {
    await t?.close();
  });

  it("answers 3,000 unknown fields with one bounded 400, not a message per field naming all of them", async () => {
    const body: Record<string, unknown> = { ...createBody };
    for (let i = 0; i < 3000; i++) body[`unknown_field_${i}`] = i;
    const res = await t.request("POST", "/v1/ext/items", body);
    expectProblem(res, 400, "validation_failed");
    expect(res.body.errors.length).toBeGreaterThan(0);
    expect(res.body.errors[0].path).toBe("unknown_field_0");
  });

  it("answers 5,000 unknown metadata keys with a bounded problem+json, not an HTML page", async () => {
    const metadata: Record<string, unknown> = {};
    for (let i = 0; i < 5000; i++) metadata[`k${i}`] = i;
    const res = await t.request("POST", "/v1/ext/items", { ...createBody, metadata });
    expectProblem(res, 422, "invalid_reference");
  });

  it.each([
    ["a text field", () => ({ ...createBody, name: "nul\u0000byte" })],
    ["a metadata value", () => ({ ...createBody, metadata: { email: "a\u0000@example.com" } })],
  ])("refuses a NUL character in %s as 400, before the database sees it", async (_label, body) => {
    const res = await t.request("POST", "/v1/ext/items", body());
    expectProblem(res, 400, "validation_failed");
  });

  it.each([
    ["a path id", "/v1/ext/items/abc%00def"],
    ["a filter", "/v1/ext/tasks?assigned_to=a%00b"],
    ["a cursor", `/v1/ext/items?cursor=${Buffer.from(JSON.stringify(["2026-01-01T00:00:00.000Z", "a\u0000b"])).toString("base64url")}`],
  ])("refuses a NUL character in %s as 400", async (_label, path) => {
    const res = await t.request("GET", path);
    expectProblem(res, 400, "validation_failed");
  });

  it("answers bad percent-encoding in a path with 400, not 500", async () => {
    const res = await t.request("GET", "/v1/ext/items/%FF");
    expectProblem(res, 400, "validation_failed");
  });

  it.each(["gzip", "deflate", "br"])("answers a corrupt %s body with 400, not 500", async (encoding) => {
    const res = await raw(t.url, {
      method: "POST",
      path: "/v1/ext/items",
      headers: { "x-api-key": t.apiKey, "content-type": "application/json", "content-encoding": encoding },
      body: Buffer.from("this is not compressed at all"),
    });
    expectProblem(res, 400, "validation_failed");
  });

  it("still accepts a well-formed gzip body", async () => {
    const res = await raw(t.url, {
      method: "POST",
      path: "/v1/ext/items",
      headers: { "x-api-key": t.apiKey, "content-type": "application/json", "content-encoding": "gzip" },
      body: zlib.gzipSync(JSON.stringify({ ...createBody, name: "Zipped" })),
    });
    expect(res.status).toBe(201);
  });

  it.each([
    ["year 0000 in due_at", () => t.request("POST", "/v1/ext/tasks", { title: "T", due_at: "0000-01-01T00:00:00Z", assigned_to: "ada" })],
    ["year 0000 in a date filter", () => t.request("GET", "/v1/ext/tasks?due_before=0000-01-01T00:00:00Z")],
  ])("refuses an out-of-range date (%s) as 400", async (_label, send) => {
    expectProblem(await send(), 400, "validation_failed");
  });

  it.each([
    ["year -1000", ["-001000-01-01T00:00:00.000Z", "x"]],
    ["year +275760", ["+275760-09-13T00:00:00.000Z", "x"]],
    ["a bare number as the time", ["0", "x"]],
    ["a bare year", ["2026", "x"]],
    ["a non-string id", ["2026-01-01T00:00:00.000Z", 5]],
    ["extra entries", ["2026-01-01T00:00:00.000Z", "x", "y"]],
  ])("refuses a cursor the server never issued (%s) as 400", async (_label, value) => {
    const cursor = Buffer.from(JSON.stringify(value)).toString("base64url");
    expectProblem(await t.request("GET", `/v1/ext/items?cursor=${cursor}`), 400, "validation_failed");
    expectProblem(await t.request("GET", `/v1/ext/tasks?cursor=${cursor}`), 400, "validation_failed");
  });
});

describe("slow requests", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ bodyTimeoutMs: 400 });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("answers a body trickled too slowly with 408 problem+json and closes the connection", async () => {
    const { port } = new URL(t.url);
    const socket = net.connect(Number(port), "127.0.0.1");
    let received = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (received += chunk));
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    socket.write(`POST /v1/ext/items HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: ${t.apiKey}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{`);
    const trickle = setInterval(() => socket.writable && socket.write(" "), 100);
    const started = Date.now();
    await closed;
    clearInterval(trickle);
    expect(Date.now() - started).toBeLessThan(5_000);
    const [head, body] = received.split("\r\n\r\n");
    expect(head).toMatch(/^HTTP\/1\.1 408 /);
    expect(head).toMatch(/content-type: application\/problem\+json/i);
    expect(JSON.parse(body!)).toMatchObject({ status: 408, code: "request_timeout" });
  });

  it("still accepts a body that arrives in time", async () => {
    const stage = t.pipeline.stages[0]!;
    const res = await t.request("POST", "/v1/ext/items", { name: "On time", pipeline_id: t.pipeline.id, stage_id: stage.id });
    expect(res.status).toBe(201);
  });
});

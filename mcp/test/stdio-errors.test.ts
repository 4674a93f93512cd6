/**
 * CONTRACT "Request ids and the request log", the stdio program's half: a tool call that fails on the API answers an
 * `isError` result whose problem carries the failed request's `request_id` (the problem body's, else the
 * `Request-Id` header's), for calls through `@stageline/client` and for the events feed's own fetch. The program's
 * operations (`clientOperations`) run behind a real McpServer and the SDK's client over the in-memory transport; a
 * scripted fetch plays the API.
 */
import { Client } from "@modelcontextprotocol/client";
import { InMemoryTransport } from "@modelcontextprotocol/server";
import { Stageline } from "@stageline/client";
import { SCOPES } from "@stageline/shared";
import { createStagelineMcpServer } from "../src";
import { clientOperations } from "../src/stdio/client-operations";

const BASE = "https://stageline.test";
const ID = "req_8Zq2xWmC1vR4nT7bY0kLdA";
const HEADER_ID = "req_Hdr0000000000000000000";

/** One scripted answer: status, body (an object is sent as a problem), headers. */
type Answer = { status: number; body?: unknown; headers?: Record<string, string> };

/** A fetch that answers every request with `answer`. */
function answering(answer: Answer): typeof fetch {
  return async () => {
    const json = answer.body !== undefined && typeof answer.body !== "string";
    const body = json ? JSON.stringify(answer.body) : ((answer.body as string | undefined) ?? null);
    const type = json ? { "content-type": "application/problem+json" } : { "content-type": "text/plain" };
    return new Response(body, { status: answer.status, headers: { ...type, ...answer.headers } });
  };
}

/** The problem of the `isError` result of calling `tool` with `args` while the API gives `answer`. */
async function toolProblem(answer: Answer, tool: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const fetch = answering(answer);
  const stageline = new Stageline({ apiKey: "sl_test", baseUrl: BASE, fetch, maxRetries: 0, maxRateLimitWaitMs: 0 });
  const ops = clientOperations(stageline, BASE, { baseUrl: BASE, apiKey: "sl_test", fetch });
  const server = createStagelineMcpServer(ops, { scopes: [...SCOPES] });
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(clientSide);
  try {
    const result = (await client.callTool({ name: tool, arguments: args })) as { isError?: boolean; content: { text?: string }[] };
    expect(result.isError).toBe(true);
    return JSON.parse(result.content[0]?.text ?? "null") as Record<string, unknown>;
  } finally {
    await client.close();
    await server.close();
  }
}

const problem = (status: number, code: string, extra: Record<string, unknown> = {}) => ({ type: "about:blank", title: code, status, detail: `detail of ${code}`, code, ...extra });
const ITEM = { item_id: "0190aaaa-0000-7000-8000-000000000001" };

describe("tool errors of the stdio program name the request", () => {
  it("carries the problem body's request_id", async () => {
    expect(await toolProblem({ status: 404, body: problem(404, "not_found", { request_id: ID }), headers: { "request-id": ID } }, "get_item", ITEM)).toEqual({
      code: "not_found",
      detail: "detail of not_found",
      request_id: ID,
    });
  });

  it("takes the Request-Id header when the body has none", async () => {
    const got = await toolProblem({ status: 409, body: problem(409, "version_conflict", { current_version: 3 }), headers: { "request-id": HEADER_ID } }, "update_item", {
      ...ITEM,
      name: "x",
      version: 1,
    });
    expect(got).toMatchObject({ code: "version_conflict", current_version: 3, request_id: HEADER_ID });
  });

  it("names the request of a 429 the program does not wait out", async () => {
    const got = await toolProblem({ status: 429, body: problem(429, "rate_limited", { request_id: ID }), headers: { "retry-after": "30", "request-id": ID } }, "get_item", ITEM);
    expect(got).toEqual({ code: "rate_limited", detail: "detail of rate_limited", retry_after_seconds: 30, request_id: ID });
  });

  it("has none for a proxy's answer without the header", async () => {
    const got = await toolProblem({ status: 404, body: "Not here" }, "get_item", ITEM);
    expect(got.code).toBe("unknown");
    expect(got).not.toHaveProperty("request_id");
  });

  it("list_events (its own fetch) takes the body's request_id, else the header's", async () => {
    const fromBody = await toolProblem({ status: 410, body: problem(410, "cursor_expired", { request_id: ID }), headers: { "request-id": HEADER_ID } }, "list_events", { after: ITEM.item_id });
    expect(fromBody).toEqual({ code: "cursor_expired", detail: "detail of cursor_expired", request_id: ID });
    const fromHeader = await toolProblem({ status: 429, headers: { "retry-after": "9", "request-id": HEADER_ID } }, "list_events", {});
    expect(fromHeader).toEqual({ code: "rate_limited", detail: "Rate limit exceeded.", retry_after_seconds: 9, request_id: HEADER_ID });
    const text = await toolProblem({ status: 502, body: "Bad gateway", headers: { "request-id": HEADER_ID } }, "list_events", {});
    expect(text).toEqual({ code: "unknown", detail: "Stageline answered HTTP 502.", request_id: HEADER_ID });
  });

  it("does not pass on a header that is not an id to paste", async () => {
    const got = await toolProblem({ status: 502, body: "Bad gateway", headers: { "request-id": "x".repeat(200) } }, "list_events", {});
    expect(got).toEqual({ code: "unknown", detail: "Stageline answered HTTP 502." });
  });
});

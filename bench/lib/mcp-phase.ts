/**
 * Issue 26, item 7: the `mcp` phase. What does the MCP endpoint (/v1/ext/mcp) cost an agent's call, next to the same
 * REST request?
 *
 * - In the bench process, one call at a time, alternating order: `tools/call get_item` over HTTP against
 *   `GET /v1/ext/items/{id}` of the same random item (the demo company's seeded items), and `tools/call list_items`
 *   with `limit: 100` against `GET /v1/ext/items?limit=100`. Each timed from the request to the parsed JSON result.
 * - The tools/call requests are what the SDK's own client sends: a client (`@modelcontextprotocol/client`) connects
 *   with the protocol revision pinned (2026-07-28) and its first `tools/call` is recorded from its `fetch` and then
 *   replayed with other ids (one POST per call: the endpoint is stateless). The 2025 revision (the stateless legacy
 *   leg: a bare JSON-RPC POST, answered as a one-event SSE stream) is measured alike, as information.
 *
 * Figures (item 11): get_item p50 overhead over REST (target < 2 ms, the 2026-07-28 revision) and list_items of 100
 * items over the plain list (p50 ratio, target < 1.5x).
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { performance } from "node:perf_hooks";
import { ms, percentile, ratio } from "./format";
import type { PhaseHost } from "./isolation";

/** Untimed pairs before the timed ones. */
const WARMUP = 100;
/** The items the get calls pick from: the newest of the list. */
const ID_POOL = 100;
const LIST_LIMIT = 100;

/** A recorded HTTP request the bench replays with other arguments. */
interface Recorded {
  url: string;
  headers: Record<string, string>;
  body: { id: number | string; params: { arguments: Record<string, unknown> } & Record<string, unknown> } & Record<string, unknown>;
}

/** Records the SDK client's first tools/call (the 2026-07-28 envelope: headers and body as the SDK builds them). */
async function recordModernToolCall(host: PhaseHost): Promise<Recorded> {
  let recorded: Recorded | undefined;
  const recordingFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const body = typeof init?.body === "string" ? JSON.parse(init.body) : undefined;
    if (body?.method === "tools/call" && !recorded) {
      recorded = { url: String(input), headers: Object.fromEntries(new Headers(init?.headers).entries()), body };
    }
    return fetch(input, init);
  };
  const client = new Client({ name: "bench", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
  const transport = new StreamableHTTPClientTransport(new URL(`${host.api.baseUrl}/v1/ext/mcp`), {
    requestInit: { headers: { "x-api-key": host.api.apiKey } },
    fetch: recordingFetch,
  });
  await client.connect(transport);
  try {
    await client.callTool({ name: "describe_pipelines", arguments: {} });
  } finally {
    await client.close();
  }
  if (!recorded) throw new Error("mcp phase: the SDK client sent no tools/call");
  return recorded;
}

/** The same call in the 2025 revision: a bare JSON-RPC POST (stateless legacy leg). */
function legacyToolCall(host: PhaseHost): Recorded {
  return {
    url: `${host.api.baseUrl}/v1/ext/mcp`,
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18", "x-api-key": host.api.apiKey },
    body: { jsonrpc: "2.0", id: 0, method: "tools/call", params: { name: "", arguments: {} } },
  };
}

let nextId = 1;
/** Sends `template` as tools/call `name(args)`; resolves with the time taken (ms) once the result is parsed. */
async function toolCall(template: Recorded, name: string, args: Record<string, unknown>): Promise<number> {
  const body = { ...template.body, id: nextId++, params: { ...template.body.params, name, arguments: args } };
  const started = performance.now();
  // The 2026-07-28 envelope repeats the tool's name in the Mcp-Name header; it must match the body.
  const headers = "mcp-name" in template.headers ? { ...template.headers, "mcp-name": name } : template.headers;
  const res = await fetch(template.url, { method: "POST", headers, body: JSON.stringify(body) });
  const text = await res.text();
  const json = (res.headers.get("content-type") ?? "").includes("text/event-stream")
    ? JSON.parse(text.split("\n").find((l) => l.startsWith("data:"))!.slice(5))
    : JSON.parse(text);
  const elapsed = performance.now() - started;
  if (res.status !== 200 || json.error || json.result?.isError || !json.result?.structuredContent) {
    throw new Error(`mcp phase: ${name} answered ${res.status} ${text.slice(0, 300)}`);
  }
  return elapsed;
}

/** GET `path` with the demo key; resolves with the time taken (ms) once the JSON is parsed. */
async function restCall(host: PhaseHost, path: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(host.api.baseUrl + path, { headers: { "x-api-key": host.api.apiKey } });
  await res.json();
  const elapsed = performance.now() - started;
  if (res.status !== 200) throw new Error(`mcp phase: GET ${path} answered ${res.status}`);
  return elapsed;
}

/** `calls` timed pairs (after WARMUP untimed) of `mcp()` and `rest()`, one at a time, order alternating. */
async function paired(calls: number, mcp: (i: number) => Promise<number>, rest: (i: number) => Promise<number>): Promise<{ mcp: number[]; rest: number[] }> {
  const out = { mcp: [] as number[], rest: [] as number[] };
  for (let i = 0; i < WARMUP + calls; i++) {
    const [a, b] = i % 2 ? [await mcp(i), await rest(i)] : [await rest(i), await mcp(i)].reverse();
    if (i >= WARMUP) {
      out.mcp.push(a!);
      out.rest.push(b!);
    }
  }
  return out;
}

/** Runs the phase against the running server (the demo company, its seeded items) and adds the item-11 figures. */
export async function runMcpPhase(host: PhaseHost): Promise<void> {
  const calls = host.o.clientCalls;
  const ids = ((await host.api.call<{ item_id: string }[]>("GET", `/v1/ext/items?limit=${ID_POOL}`)).body ?? []).map((x) => x.item_id);
  if (ids.length < 10) throw new Error(`mcp phase: needs seeded items, found ${ids.length}`);
  const pick = (i: number) => ids[(i * 7919) % ids.length]!;
  const modern = await recordModernToolCall(host);
  const legacy = legacyToolCall(host);
  const results = await host.during(`mcp: get_item and list_items over /v1/ext/mcp vs REST (${calls} calls of each)`, async () => ({
    getModern: await paired(calls, (i) => toolCall(modern, "get_item", { item_id: pick(i) }), (i) => restCall(host, `/v1/ext/items/${pick(i)}`)),
    getLegacy: await paired(calls, (i) => toolCall(legacy, "get_item", { item_id: pick(i) }), (i) => restCall(host, `/v1/ext/items/${pick(i)}`)),
    list: await paired(Math.max(10, Math.ceil(calls / 4)), () => toolCall(modern, "list_items", { limit: LIST_LIMIT }), () => restCall(host, `/v1/ext/items?limit=${LIST_LIMIT}`)),
  }));
  host.assertAlive();
  const p = percentile;
  const overhead = (r: { mcp: number[]; rest: number[] }, q: number) => p(r.mcp, q) - p(r.rest, q);
  const listRatio = p(results.list.mcp, 50) / p(results.list.rest, 50);
  host.figures.push(
    {
      item: 11,
      metric: "MCP: tools/call get_item (2026-07-28) overhead over GET /v1/ext/items/{id}, p50",
      value: overhead(results.getModern, 50),
      display: `${ms(overhead(results.getModern, 50))} (MCP p50 ${ms(p(results.getModern.mcp, 50))} vs REST ${ms(p(results.getModern.rest, 50))}; p99 ${ms(p(results.getModern.mcp, 99))} vs ${ms(p(results.getModern.rest, 99))})`,
      target: { op: "<", limit: 2, text: "< 2 ms" },
    },
    {
      item: 11,
      metric: "MCP: tools/call get_item (2025 revision, stateless SSE answer) overhead, p50",
      value: overhead(results.getLegacy, 50),
      display: `${ms(overhead(results.getLegacy, 50))} (MCP p50 ${ms(p(results.getLegacy.mcp, 50))} vs REST ${ms(p(results.getLegacy.rest, 50))})`,
    },
    {
      item: 11,
      metric: `MCP: tools/call list_items of ${LIST_LIMIT} items / GET /v1/ext/items?limit=${LIST_LIMIT}, p50`,
      value: listRatio,
      display: `${ratio(listRatio)} (MCP p50 ${ms(p(results.list.mcp, 50))} vs REST ${ms(p(results.list.rest, 50))})`,
      target: { op: "<", limit: 1.5, text: "< 1.5x" },
    },
  );
  host.details.push(
    "",
    `MCP phase (issue 26): one call at a time from the bench process, MCP and REST alternating; get_item: ${results.getModern.mcp.length} timed pairs per revision of a random item among the newest ${ids.length}, after ${WARMUP} untimed; list_items: ${results.list.mcp.length} timed pairs with limit ${LIST_LIMIT}. The 2026-07-28 request is the SDK client's own tools/call, recorded and replayed; each call is one stateless POST.`,
    "",
  );
}

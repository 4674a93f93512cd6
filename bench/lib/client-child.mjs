// @ts-check
/**
 * The child process of the benchmark's `client` phase (issue 21, item 6; bench/lib/client-phase.ts starts it). Plain
 * JavaScript run by `node` itself (no TypeScript loader in the measured process), importing `@stageline/client` the
 * way a user's script does (the workspace package, its built `dist`).
 *
 * argv[2] is a JSON job; the result is one JSON line on stdout; any failure exits 1 with the error on stderr.
 *
 * - `{ "mode": "iterate", "via": "client" | "raw", "baseUrl", "apiKey", "pipelineId", "count", "limit" }`: reads the
 *   pipeline's items newest first until `count` have been seen, either with `items.iterate` or with `fetch` following
 *   `Link: <...>; rel="next"` by hand (each page's JSON parsed, each record visited, nothing kept). Result:
 *   `{ items, elapsedMs, requests, lastId, rssStartMb, maxRssMb }`: elapsed from the first request to the
 *   `count`-th item (ms), `requests` the pages fetched (raw only; null through the client), `lastId` the `count`-th
 *   item's id (the parent checks it is the seeded item `count`), `rssStartMb` the RSS right before the first request,
 *   `maxRssMb` the process's high-water mark (`process.resourceUsage().maxRSS`, MiB) after the last item.
 * - `{ "mode": "get", "baseUrl", "apiKey", "ids", "calls", "warmup" }`: `warmup` then `calls` rounds, each one
 *   `items.get(id)` and one raw `fetch` + JSON parse of `GET /v1/ext/items/{id}` of the same random id, in alternating
 *   order (client first in even rounds), one at a time. Result: `{ clientMs: number[], rawMs: number[] }`, the
 *   timed rounds' latencies in ms (high resolution).
 */
import { performance } from "node:perf_hooks";
import { Stageline } from "@stageline/client";

const MB = 1024; // maxRSS is in KiB

/** @param {string | null} header @returns {string | null} the `rel="next"` target of a Link header (RFC 8288). */
function nextLink(header) {
  for (const part of (header ?? "").split(",")) {
    const m = /^\s*<([^>]*)>(.*)$/.exec(part);
    if (m && /;\s*rel="?(?:[^";]*\s)?next(?:\s[^";]*)?"?\s*(?:;|$)/i.test(m[2] ?? "")) return m[1] ?? null;
  }
  return null;
}

/**
 * @param {{ via: "client" | "raw", baseUrl: string, apiKey: string, pipelineId: string, count: number, limit: number }} job
 */
async function iterate(job) {
  const rssStartMb = process.memoryUsage.rss() / 2 ** 20;
  let items = 0;
  let lastId = "";
  let requests = 0;
  /** @type {{ items: number, rssMb: number, heapUsedMb: number }[]} */
  const checkpoints = [];
  const step = Math.max(1, Math.floor(job.count / 10));
  const seen = (/** @type {{ item_id: string }} */ item) => {
    items++;
    lastId = item.item_id;
    if (items % step === 0) {
      const m = process.memoryUsage();
      checkpoints.push({ items, rssMb: m.rss / 2 ** 20, heapUsedMb: m.heapUsed / 2 ** 20 });
    }
  };
  const started = performance.now();
  if (job.via === "client") {
    const client = new Stageline({ apiKey: job.apiKey, baseUrl: job.baseUrl });
    for await (const item of client.items.iterate({ pipeline_id: job.pipelineId, limit: job.limit })) {
      seen(item);
      if (items === job.count) break;
    }
  } else {
    /** @type {string | null} */
    let url = new URL(`/v1/ext/items?pipeline_id=${encodeURIComponent(job.pipelineId)}&limit=${job.limit}`, job.baseUrl).href;
    while (url && items < job.count) {
      const res = await fetch(url, { headers: { "x-api-key": job.apiKey, accept: "application/json" } });
      requests++;
      if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
      /** @type {{ item_id: string }[]} */
      const page = await res.json();
      for (const item of page) {
        seen(item);
        if (items === job.count) break;
      }
      const next = nextLink(res.headers.get("link"));
      url = next ? new URL(next, url).href : null;
    }
  }
  const elapsedMs = performance.now() - started;
  const maxRssMb = process.resourceUsage().maxRSS / MB;
  globalThis.gc?.(); // node --expose-gc: what the process still holds once the garbage is gone
  return { items, elapsedMs, requests: job.via === "raw" ? requests : null, lastId, rssStartMb, maxRssMb, heapAfterGcMb: process.memoryUsage().heapUsed / 2 ** 20, checkpoints };
}

/** @param {{ baseUrl: string, apiKey: string, ids: string[], calls: number, warmup: number }} job */
async function get(job) {
  const client = new Stageline({ apiKey: job.apiKey, baseUrl: job.baseUrl });
  const viaClient = async (/** @type {string} */ id) => {
    const item = await client.items.get(id);
    if (item.item_id !== id) throw new Error(`items.get(${id}) returned ${item.item_id}`);
  };
  const viaRaw = async (/** @type {string} */ id) => {
    const res = await fetch(new URL(`/v1/ext/items/${encodeURIComponent(id)}`, job.baseUrl), { headers: { "x-api-key": job.apiKey, accept: "application/json" } });
    if (res.status !== 200) throw new Error(`GET /v1/ext/items/${id} answered ${res.status}`);
    const item = await res.json();
    if (item.item_id !== id) throw new Error(`GET /v1/ext/items/${id} returned ${item.item_id}`);
  };
  /** @type {number[]} */
  const clientMs = [];
  /** @type {number[]} */
  const rawMs = [];
  const time = async (/** @type {(id: string) => Promise<void>} */ fn, /** @type {string} */ id, /** @type {number[] | null} */ into) => {
    const t = performance.now();
    await fn(id);
    into?.push(performance.now() - t);
  };
  for (let round = 0; round < job.warmup + job.calls; round++) {
    const id = job.ids[Math.floor(Math.random() * job.ids.length)] ?? "";
    const timed = round >= job.warmup;
    const pair = [
      () => time(viaClient, id, timed ? clientMs : null),
      () => time(viaRaw, id, timed ? rawMs : null),
    ];
    if (round % 2) pair.reverse();
    for (const call of pair) await call();
  }
  return { clientMs, rawMs };
}

const job = JSON.parse(process.argv[2] ?? "{}");
const run = job.mode === "iterate" ? iterate(job) : job.mode === "get" ? get(job) : Promise.reject(new Error(`unknown mode ${job.mode}`));
run.then(
  (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
  (err) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);

// @ts-check
/**
 * The child process of the benchmark's `client` phase (issue 21, item 6; bench/lib/client-phase.ts starts it). Plain
 * JavaScript run by `node --expose-gc` itself (no TypeScript loader in the measured process), requiring
 * `@stageline/client` the way a user's CommonJS script does (the workspace package's `dist/cjs`, which the root
 * `npm run build` compiles; the ES module entry needs the package's own build).
 *
 * argv[2] is a JSON job; the result is one JSON line on stdout; any failure exits 1 with the error on stderr.
 *
 * - `{ "mode": "iterate", "via": "client" | "raw", "baseUrl", "apiKey", "pipelineId", "count", "limit" }`: reads the
 *   pipeline's items newest first until `count` have been seen, either with `items.iterate` or with `fetch` following
 *   `Link: <...>; rel="next"` by hand (each page's JSON parsed, each record visited, nothing kept). Result:
 *   `{ items, elapsedMs, requests, lastId, rssStartMb, maxRssMb, heapAfterGcMb, checkpoints }`: elapsed from the
 *   first request to the `count`-th item (ms), `requests` the pages fetched (raw only; null through the client),
 *   `lastId` the `count`-th item's id (the parent checks it is the seeded item `count`), `rssStartMb` the RSS right
 *   before the first request, `maxRssMb` the process's high-water mark (`process.resourceUsage().maxRSS`, MiB) after
 *   the last item, `heapAfterGcMb` the V8 heap in use after a full GC then (what the reader still holds),
 *   `checkpoints` `{ items, rssMb, heapUsedMb }` at every tenth of `count`.
 * - `{ "mode": "paired", ...as iterate without "via" }`: both readers in turn, page by page, in one process (see
 *   `paired`). Result: `{ client: { items, ms, lastId }, raw: { items, ms, lastId } }`, `ms` the reader's own time.
 * - `{ "mode": "get", "baseUrl", "apiKey", "ids", "calls", "warmup" }`: `warmup` then `calls` rounds, each one
 *   `items.get(id)` and one raw `fetch` + JSON parse of `GET /v1/ext/items/{id}` of the same random id, in alternating
 *   order (client first in even rounds), one at a time. Result: `{ clientMs: number[], rawMs: number[] }`, the
 *   timed rounds' latencies in ms (high resolution).
 */
const { performance } = require("node:perf_hooks");
const { Stageline } = require("@stageline/client");

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

/**
 * Both readers in one process, page by page in turn (which goes first alternates): each step takes the next `limit`
 * items from `items.iterate` (its first `next()` of a step fetches the page) and then fetches and visits the next
 * raw page, or the other way round; each reader's time is summed on its own. Whatever else the machine is doing
 * then slows both alike, so their ratio holds where two separate runs minutes apart would not.
 * @param {{ baseUrl: string, apiKey: string, pipelineId: string, count: number, limit: number }} job
 */
async function paired(job) {
  const client = new Stageline({ apiKey: job.apiKey, baseUrl: job.baseUrl });
  const iterator = client.items.iterate({ pipeline_id: job.pipelineId, limit: job.limit })[Symbol.asyncIterator]();
  /** @type {string | null} */
  let url = new URL(`/v1/ext/items?pipeline_id=${encodeURIComponent(job.pipelineId)}&limit=${job.limit}`, job.baseUrl).href;
  const state = { client: { items: 0, ms: 0, lastId: "" }, raw: { items: 0, ms: 0, lastId: "" } };
  const clientStep = async () => {
    const t = performance.now();
    for (let i = 0; i < job.limit && state.client.items < job.count; i++) {
      const next = await iterator.next();
      if (next.done) break;
      state.client.items++;
      state.client.lastId = next.value.item_id;
    }
    state.client.ms += performance.now() - t;
  };
  const rawStep = async () => {
    if (!url) return;
    const t = performance.now();
    const res = await fetch(url, { headers: { "x-api-key": job.apiKey, accept: "application/json" } });
    if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}`);
    /** @type {{ item_id: string }[]} */
    const page = await res.json();
    for (const item of page) {
      if (state.raw.items === job.count) break;
      state.raw.items++;
      state.raw.lastId = item.item_id;
    }
    const next = nextLink(res.headers.get("link"));
    url = next && state.raw.items < job.count ? new URL(next, url).href : null;
    state.raw.ms += performance.now() - t;
  };
  for (let step = 0; state.client.items < job.count || state.raw.items < job.count; step++) {
    const before = state.client.items + state.raw.items;
    if (step % 2) {
      await rawStep();
      await clientStep();
    } else {
      await clientStep();
      await rawStep();
    }
    if (state.client.items + state.raw.items === before) break; // both ran out of items
  }
  await iterator.return?.(undefined);
  return state;
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
const modes = { iterate, paired, get };
const run = job.mode in modes ? modes[/** @type {keyof typeof modes} */ (job.mode)](job) : Promise.reject(new Error(`unknown mode ${job.mode}`));
run.then(
  (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
  (err) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);

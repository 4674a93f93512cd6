/**
 * Issue 21, item 6: the `client` phase. What does `@stageline/client` cost a script, next to `fetch` by hand?
 *
 * - Another company (admin CLI, like the issue-17 phases) gets a pipeline shaped like the demo one (four stages,
 *   custom fields email and deal_value) holding the largest of `o.clientSizes` items, bulk-inserted with
 *   `generate_series` (seed.ts) during the pass's own seeding (pass.ts setUp; on PGlite in the same server stop),
 *   never through the API.
 * - Iteration: fresh child processes (client-child.cjs, plain `node` with the server's V8 settings, pinned to the
 *   bench's core like this process) read the pipeline's items newest first, pages of PAGE_LIMIT, until they have
 *   seen N of them, for each count N of `o.clientSizes`, after one untimed raw pass over the largest count that warms
 *   the server and the database cache. First each reader alone (`items.iterate`, or `fetch` following
 *   `Link: rel="next"` by hand): items/s, peak RSS (`process.resourceUsage().maxRSS`) and the heap left after a full
 *   GC. Then `rounds` paired runs, both readers in one process page by page in turn, each reader's own time summed:
 *   the throughput ratio (median of the rounds), which other work on the machine cannot tilt the way it tilts two
 *   runs made seconds apart. The N-th item must be seeded item N, else the phase fails.
 * - Per-call overhead: one child process calls `items.get(id)` and a raw `fetch` + JSON parse of the same random id
 *   in alternating order, one call at a time, `o.clientCalls` timed pairs after `getWarmup` untimed ones.
 *
 * Figures are item 10 of the report: throughput ratio client / raw per count (target ≥ 0.90x), the client's peak RSS
 * at the largest count over the smallest (target ≤ 1.10x: flat), and the `items.get` overhead at p50 (target < 1 ms).
 * The server's rate limit is the bench's RATE_LIMIT_PER_MINUTE for every key (server-process.ts), so no 429 slows
 * either reader.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import type { Sql } from "./db";
import { mb, ms, percentile, ratio, sizeLabel } from "./format";
import { createTenant, type PhaseHost } from "./isolation";
import type { BenchOptions } from "./options";
import { seedItems, seededItemId, verifySeededOrder, type SeedPlan } from "./seed";
import { SERVER_NODE_FLAGS } from "../../server/src/runtime-flags";
import { REPO_ROOT } from "./server-process";

/** The child script, run by `node` itself (no TypeScript loader in the measured process). */
const CHILD = path.join(__dirname, "client-child.cjs");
/** Items per page for both readers: the API's default page (CONTRACT "Lists": limit 1..500, default 100). */
const PAGE_LIMIT = 100;
/** Untimed `items.get` pairs before the timed ones (connection, JIT): 200, or half the timed ones when fewer. */
const getWarmup = (calls: number) => Math.min(200, Math.ceil(calls / 2));
/** Ids the `items.get` calls pick from at random: the newest seeded items. */
const GET_IDS = 1000;
/** Any child taking longer than this fails the phase. */
const CHILD_TIMEOUT_MS = 10 * 60_000;

/** The benchmark company's pipeline, shaped like the demo "Sales" (server/src/seed/demo.ts). */
const CLIENT_PIPELINE = {
  name: "Client bench",
  short_id_prefix: "CLIENT",
  stages: ["Lead", "Qualified", "Proposal", "Closed"].map((name) => ({ name })),
  custom_fields: [
    { key: "email", label: "Email", type: "email" },
    { key: "deal_value", label: "Deal value", type: "number" },
  ],
};

type Via = "client" | "raw";

/** What client-child.cjs reports for one `iterate` job (see its header). */
interface IterateResult {
  items: number;
  elapsedMs: number;
  requests: number | null;
  lastId: string;
  rssStartMb: number;
  maxRssMb: number;
  /** V8 heap in use after a full GC at the end: what the reader still holds. */
  heapAfterGcMb: number;
  /** RSS and heap in use at every tenth of the items. */
  checkpoints: { items: number; rssMb: number; heapUsedMb: number }[];
}

/** What client-child.cjs reports for one `paired` job: each reader's items, own time (ms) and last item id. */
type PairedResult = Record<Via, { items: number; ms: number; lastId: string }>;

/** What client-child.cjs reports for one `get` job: latencies in ms of the timed calls. */
interface GetResult {
  clientMs: number[];
  rawMs: number[];
}

/**
 * Runs client-child.cjs with one job (JSON) and parses the JSON line it prints. NODE_OPTIONS is dropped so that no
 * loader of this process (tsx) rides along into the measured one. The child gets the V8 settings `npm start` gives
 * the server (server/src/runtime-flags.ts), among them a young generation of at most 8 MB per semi-space: with
 * node's default, V8 enlarges the young generation as a long loop keeps allocating, and peak RSS then grows by about
 * 30 MB between 10k and 100k items for raw fetch and client alike although the heap in use after a full GC stays
 * at 7 MB (measured; bench/README.md), which would hide the one growth the RSS figure is for: items kept.
 * @throws with the child's stderr when it exits non-zero, prints no JSON or outlives CHILD_TIMEOUT_MS.
 */
async function runChild<T>(job: Record<string, unknown>): Promise<T> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NODE_OPTIONS;
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [...SERVER_NODE_FLAGS, "--expose-gc", CHILD, JSON.stringify(job)], {
      cwd: REPO_ROOT,
      env,
      maxBuffer: 64 * 2 ** 20,
      timeout: CHILD_TIMEOUT_MS,
    });
    return JSON.parse(stdout.trim().split("\n").pop() ?? "") as T;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`client bench child (${String(job.mode)}${job.via ? `, ${String(job.via)}` : ""}) failed: ${(e.stderr || e.message).slice(0, 600)}`);
  }
}

/** The benchmark company of the phase: its key, pipeline and seeding plan (seed.ts numbering). */
export interface ClientBench {
  apiKey: string;
  pipelineId: string;
  plan: SeedPlan;
}

/**
 * Creates the phase's company (admin CLI, needs the server running) with a pipeline shaped like the demo one. Called
 * by the pass before its own bulk seeding, so that on PGlite one server stop serves both.
 */
export async function prepareClientPhase(host: PhaseHost): Promise<ClientBench> {
  const tenant = await createTenant(host, "Client benchmark", CLIENT_PIPELINE);
  return {
    apiKey: tenant.api.apiKey,
    pipelineId: tenant.pipelineId,
    plan: { companyId: tenant.companyId, pipelineId: tenant.pipelineId, t0Ms: Math.floor(Date.now() / 1000) * 1000 - 60_000 },
  };
}

/**
 * Bulk-seeds the largest of `o.clientSizes` items into the phase's pipeline on an open connection (PGlite: while
 * the server is stopped) and checks their order. @returns a note for the report.
 */
export async function seedClientPipeline(sql: Sql, bench: ClientBench, o: BenchOptions): Promise<string> {
  const count = o.clientSizes[o.clientSizes.length - 1]!;
  const started = Date.now();
  await seedItems(sql, bench.plan, 1, count + 1);
  await verifySeededOrder(sql, bench.plan, count - 1);
  return `Client phase: seeded ${count.toLocaleString("en-US")} items of another company's pipeline in ${((Date.now() - started) / 1000).toFixed(1)} s (bulk SQL, not the API).`;
}

const itemsPerSecond = (r: IterateResult) => r.items / (r.elapsedMs / 1000);
const pairedRate = (r: PairedResult[Via]) => r.items / (r.ms / 1000);
const perSecond = (n: number) => `${Math.round(n).toLocaleString("en-US")} items/s`;
const median = (values: number[]) => percentile(values, 50);

/** Runs the phase on `host`'s running server, on the pipeline `seedClientPipeline` filled; results go to the host's lists. */
export async function runClientPhase(host: PhaseHost, bench: ClientBench): Promise<void> {
  const { o } = host;
  const sizes = o.clientSizes;
  const largest = sizes[sizes.length - 1]!;
  const { apiKey, pipelineId, plan } = bench;

  const job = (count: number) => ({ baseUrl: host.api.baseUrl, apiKey, pipelineId, count, limit: PAGE_LIMIT });
  const check = (what: string, items: number, lastId: string, count: number) => {
    const expected = seededItemId(plan.companyId, count);
    if (items !== count || lastId !== expected) {
      throw new Error(`client phase: ${what} saw ${items} items ending with ${lastId} (expected ${count} ending with seeded item ${expected})`);
    }
  };
  const iterate = async (via: Via, count: number): Promise<IterateResult> => {
    host.assertAlive();
    const r = await runChild<IterateResult>({ mode: "iterate", via, ...job(count) });
    check(`${via} iteration`, r.items, r.lastId, count);
    return r;
  };
  const paired = async (count: number): Promise<PairedResult> => {
    host.assertAlive();
    const r = await runChild<PairedResult>({ mode: "paired", ...job(count) });
    for (const via of ["client", "raw"] as const) check(`paired ${via} iteration`, r[via].items, r[via].lastId, count);
    return r;
  };

  // At least 3 paired rounds outside --quick: the ratio is their median, robust to one round disturbed by other work.
  const rounds = o.quick ? o.rounds : Math.max(3, o.rounds);
  const runs = new Map<number, Record<Via, IterateResult>>();
  const pairs = new Map<number, PairedResult[]>();
  await host.during(`client: iterate ${sizes.map(sizeLabel).join(" and ")} items, items.iterate vs raw fetch`, async () => {
    const warm = await iterate("raw", largest);
    host.log(`    warm-up (raw, ${sizeLabel(largest)}): ${perSecond(itemsPerSecond(warm))}`);
    for (const [index, size] of sizes.entries()) {
      const alone = {} as Record<Via, IterateResult>;
      for (const via of index % 2 ? (["client", "raw"] as const) : (["raw", "client"] as const)) {
        alone[via] = await iterate(via, size);
        host.log(`    ${via} alone, ${sizeLabel(size)}: ${perSecond(itemsPerSecond(alone[via]))}, peak RSS ${mb(alone[via].maxRssMb)}`);
      }
      runs.set(size, alone);
      const rs: PairedResult[] = [];
      for (let round = 0; round < rounds; round++) {
        const r = await paired(size);
        rs.push(r);
        host.log(`    paired ${sizeLabel(size)}, round ${round + 1}: client ${perSecond(pairedRate(r.client))}, raw ${perSecond(pairedRate(r.raw))}`);
      }
      pairs.set(size, rs);
    }
  });

  let get: GetResult | undefined;
  await host.during(`client: items.get overhead (${o.clientCalls.toLocaleString("en-US")} calls of each)`, async () => {
    const ids = Array.from({ length: Math.min(GET_IDS, largest) }, (_, i) => seededItemId(plan.companyId, i + 1));
    get = await runChild<GetResult>({ mode: "get", baseUrl: host.api.baseUrl, apiKey, ids, calls: o.clientCalls, warmup: getWarmup(o.clientCalls) });
  });
  host.assertAlive();
  reportFigures(host, sizes, runs, pairs, get!);
}

/** Item-10 figures and the details: each run alone, each paired round, the memory along the largest runs. */
function reportFigures(host: PhaseHost, sizes: number[], runs: Map<number, Record<Via, IterateResult>>, pairs: Map<number, PairedResult[]>, get: GetResult): void {
  const rows: string[] = [];
  for (const size of sizes) {
    const alone = runs.get(size)!;
    const rounds = pairs.get(size)!;
    const ratios = rounds.map((r) => pairedRate(r.client) / pairedRate(r.raw));
    const ratioMedian = median(ratios);
    host.figures.push(
      { item: 10, metric: `Client: items.iterate over ${sizeLabel(size)} items (run alone)`, value: itemsPerSecond(alone.client), display: `${perSecond(itemsPerSecond(alone.client))} (peak RSS ${mb(alone.client.maxRssMb)})` },
      { item: 10, metric: `Client: raw fetch following Link over ${sizeLabel(size)} items (run alone)`, value: itemsPerSecond(alone.raw), display: `${perSecond(itemsPerSecond(alone.raw))} (peak RSS ${mb(alone.raw.maxRssMb)})` },
      {
        item: 10,
        metric: `Client: items.iterate / raw fetch throughput at ${sizeLabel(size)} items (paired, page by page in one process)`,
        value: ratioMedian,
        display: `${ratio(ratioMedian)} (median of ${ratios.length}: ${ratios.map((x) => x.toFixed(3)).join(", ")})`,
        target: { op: ">=", limit: 0.9, text: "≥ 0.90x" },
      },
    );
    for (const via of ["raw", "client"] as const) {
      const x = alone[via];
      rows.push(`| ${sizeLabel(size)} | ${via} alone | ${Math.round(itemsPerSecond(x)).toLocaleString("en-US")} | ${(x.elapsedMs / 1000).toFixed(2)} | ${mb(x.rssStartMb)} | ${mb(x.maxRssMb)} | ${x.heapAfterGcMb.toFixed(1)} MB |`);
    }
    rounds.forEach((r, i) =>
      rows.push(`| ${sizeLabel(size)} | paired ${i + 1}: client / raw | ${Math.round(pairedRate(r.client)).toLocaleString("en-US")} / ${Math.round(pairedRate(r.raw)).toLocaleString("en-US")} | ${(r.client.ms / 1000).toFixed(2)} / ${(r.raw.ms / 1000).toFixed(2)} | | | |`),
    );
  }
  const small = runs.get(sizes[0]!)!;
  const large = runs.get(sizes[sizes.length - 1]!)!;
  if (sizes.length > 1) {
    const growth = large.client.maxRssMb / small.client.maxRssMb;
    const rawGrowth = large.raw.maxRssMb / small.raw.maxRssMb;
    host.figures.push({
      item: 10,
      metric: `Client: peak RSS of the iterating process, ${sizeLabel(sizes[sizes.length - 1]!)} vs ${sizeLabel(sizes[0]!)} items`,
      value: growth,
      display: `${ratio(growth)} (${mb(small.client.maxRssMb)} → ${mb(large.client.maxRssMb)}; raw fetch ${ratio(rawGrowth)}; heap after GC ${small.client.heapAfterGcMb.toFixed(1)} → ${large.client.heapAfterGcMb.toFixed(1)} MB)`,
      target: { op: "<=", limit: 1.1, text: "≤ 1.10x (flat)" },
    });
  }
  const p = (values: number[], q: number) => percentile(values, q);
  const overhead50 = p(get.clientMs, 50) - p(get.rawMs, 50);
  const overhead99 = p(get.clientMs, 99) - p(get.rawMs, 99);
  const paired = get.clientMs.map((c, i) => c - get.rawMs[i]!);
  host.figures.push(
    { item: 10, metric: "Client: items.get latency", value: p(get.clientMs, 50), display: `p50 ${ms(p(get.clientMs, 50))}, p99 ${ms(p(get.clientMs, 99))}` },
    { item: 10, metric: "Client: raw fetch GET /v1/ext/items/{id} latency", value: p(get.rawMs, 50), display: `p50 ${ms(p(get.rawMs, 50))}, p99 ${ms(p(get.rawMs, 99))}` },
    { item: 10, metric: "Client: items.get overhead over raw fetch, p50", value: overhead50, display: `${ms(overhead50)} (p99 ${ms(overhead99)})`, target: { op: "<", limit: 1, text: "< 1 ms" } },
  );
  host.details.push(
    "",
    `Client phase (issue 21): each run is a fresh \`node\` child reading the benchmark pipeline newest first in pages of ${PAGE_LIMIT} until it has seen N items: each reader alone (items/s from its first request to the N-th item; RSS at start, after importing, and peak, \`process.resourceUsage().maxRSS\`; V8 heap in use after a full GC at the end), then both in one process page by page in turn, each reader's own time summed (the throughput ratio). The N-th item is checked to be seeded item N. items.get: ${get.clientMs.length} timed pairs after ${getWarmup(get.clientMs.length)} untimed, client and raw fetch of the same random id one after the other (order alternating), one call at a time; paired difference client − raw p50 ${ms(p(paired, 50))}, p99 ${ms(p(paired, 99))}.`,
    "",
    "| Items | Run | items/s | s | RSS at start | peak RSS | heap after GC |",
    "|---|---|---|---|---|---|---|",
    ...rows,
    "",
    ...(["client", "raw"] as const).map(
      (via) =>
        `RSS / V8 heap in use along the ${via} run over ${sizeLabel(sizes[sizes.length - 1]!)} items alone: ${large[via].checkpoints.map((c) => `${sizeLabel(c.items)} ${mb(c.rssMb)}/${mb(c.heapUsedMb)}`).join(", ")}.`,
    ),
    "",
  );
}

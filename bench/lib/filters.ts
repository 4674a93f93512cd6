/**
 * The `filters` phase (issue 25, item 11): subscription filters cost an event nothing when they exclude it.
 *
 * The demo company gets a second pipeline (admin CLI) and, in the measured rounds, 100 item.created REST hooks whose
 * filters exclude every item the load creates (in the demo pipeline's first stage): 80 filtered to the other pipeline
 * (never read by the fan-out: its index scan looks up '' and the event's pipeline only) and 20 to the demo pipeline's
 * last stage (read, then excluded before the row lock). N items (10,000; 1,000 with --quick) are created through the
 * API with no subscriptions and N with the 100 filtered ones, in chunks interleaved A B B A ... (drift on a shared
 * machine falls on both alike); the figure is the median over the chunk pairs of filtered ÷ plain wall time (target
 * ≤ 1.10x on PostgreSQL; a median, because other work on a shared machine comes in bursts that hit single chunks),
 * with the ratio of the totals beside it, and the delivery rows the filtered runs wrote are counted: through
 * the API (every subscription's delivery log) on both databases and with SQL on PostgreSQL (target 0).
 */
import fs from "node:fs";
import path from "node:path";
import type { PhaseHost } from "./isolation";
import { adminCli, subscribeMany, unsubscribeAll } from "./isolation";
import { ms, percentile, ratio } from "./format";

/** Figure group of the issue-25 phases in the report. */
const ITEM = 11;
/** Filtered subscriptions, as the issue asks. */
const SUBSCRIPTIONS = 100;
/** Of them, filtered to the demo pipeline's last stage (the rest: to another pipeline). */
const STAGE_FILTERED = 20;
/** Runs per kind (each of N / CHUNKS creates), interleaved. */
const CHUNKS = 10;
/** The creates' wall time with the filtered subscriptions may be at most this multiple of the time without. */
const TARGET_RATIO = 1.1;

/** The other pipeline of the demo company (one stage, default statuses). */
const OTHER_PIPELINE = { name: "Filtered elsewhere", short_id_prefix: "FLT", stages: [{ name: "Intake" }] };

/** Items created per measured run. */
export function filterPhaseItems(quick: boolean): number {
  return quick ? 1_000 : 10_000;
}

/** One timed run of creates. */
interface CreateRun {
  /** From the first request sent to the last response received, ms (precise: no load generator's sampling tick). */
  wallMs: number;
  ok: number;
  p50: number;
  p99: number;
  /** The first non-2xx answer or error, quoted. */
  failure?: string;
}

/**
 * Creates `amount` items through the API, `o.connections` requests in flight (keep-alive fetch, `[<id>]` in `template`
 * made unique per request), timing the whole run and each request.
 */
async function createItems(host: PhaseHost, template: string, amount: number): Promise<CreateRun> {
  const headers = { "x-api-key": host.api.apiKey, "content-type": "application/json" };
  const latencies: number[] = [];
  let sent = 0;
  let ok = 0;
  let failure: string | undefined;
  const started = performance.now();
  const worker = async () => {
    while (sent < amount) {
      const n = sent++;
      const at = performance.now();
      try {
        const res = await fetch(`${host.api.baseUrl}/v1/ext/items`, { method: "POST", headers, body: template.replaceAll("[<id>]", `f${n}-${Date.now()}`) });
        const text = await res.text();
        if (res.status === 201) ok++;
        else failure ??= `${res.status} ${text.slice(0, 200)}`;
      } catch (err) {
        failure ??= String(err);
      }
      latencies.push(performance.now() - at);
    }
  };
  await Promise.all(Array.from({ length: Math.min(host.o.connections, amount) }, worker));
  const wallMs = performance.now() - started;
  return { wallMs, ok, p50: percentile(latencies, 50), p99: percentile(latencies, 99), ...(failure ? { failure } : {}) };
}

/** Runs the phase; appends its figures and details to the host's report. */
export async function runFiltersPhase(host: PhaseHost): Promise<void> {
  await host.during("filters: 10k creates, 100 filtered subscriptions vs none", async () => {
    const count = filterPhaseItems(host.o.quick);
    const me = await host.api.expect<{ company: { id: string } }>(200, "GET", "/v1/ext/me");
    const companyId = me.body.company.id;
    const file = path.join(host.tmpDir, "filtered-pipeline.json");
    fs.writeFileSync(file, JSON.stringify(OTHER_PIPELINE));
    const other = await adminCli<{ id: string }>(host, ["pipelines", "import", "--company", companyId, "--file", file]);
    const body = host.itemBody("[<id>]") as { pipeline_id: string; stage_id: string };
    const stages = await host.api.expect<{ id: string }[]>(200, "GET", `/v1/ext/pipelines/${body.pipeline_id}/stages`);
    const lastStage = stages.body[stages.body.length - 1]!.id;
    if (lastStage === body.stage_id) throw new Error("filters phase: the demo pipeline needs two stages");
    const filterOf = (n: number) => (n < STAGE_FILTERED ? { pipeline_id: body.pipeline_id, stage_id: lastStage } : { pipeline_id: other.id });
    // Never called: a delivery would be a failure of the filter (counted below), and the port refuses connections.
    const target = (n: number) => `http://127.0.0.1:9/filtered/${n}`;

    const template = JSON.stringify(body);
    const chunks = host.o.quick ? 2 : CHUNKS;
    const chunk = Math.ceil(count / chunks);
    const createRun = async (label: string, amount: number): Promise<CreateRun> => {
      const run = await createItems(host, template, amount);
      host.assertAlive();
      host.log(`    ${label}: ${run.ok} creates in ${(run.wallMs / 1000).toFixed(2)} s (${Math.round((run.ok * 1000) / run.wallMs)} items/s, p50 ${ms(run.p50)}, p99 ${ms(run.p99)})`);
      if (run.ok !== amount) host.errors.push(`filters, ${label}: ${run.ok} of ${amount} creates answered 2xx${run.failure ? `; first failure: ${run.failure}` : ""}`);
      return run;
    };
    const deliveryRows = async (): Promise<number | null> =>
      host.sql ? Number((await host.sql.query<{ n: string }>(`SELECT count(*)::bigint AS n FROM webhook_deliveries`))[0]?.n ?? 0) : null;

    // Warm-up: creates and the fan-out's statements prepared.
    await createRun("warm-up, no subscriptions", chunk);
    // The N creates of each kind in CHUNKS runs, interleaved A B B A A B ... so that drift on a shared machine (other
    // work coming and going) falls on both kinds alike; the subscriptions exist only during the filtered runs.
    const plain: CreateRun[] = [];
    const filtered: CreateRun[] = [];
    let logged = 0;
    let written = 0;
    let sqlMeasured = false;
    let ids: string[] = [];
    const order = Array.from({ length: chunks }, (_, i) => (i % 2 === 0 ? ["plain", "filtered"] : ["filtered", "plain"])).flat();
    try {
      for (const [i, kind] of order.entries()) {
        const round = Math.floor(i / 2) + 1;
        if (kind === "plain") {
          if (ids.length) await unsubscribeAll(host.api, ids.splice(0));
          plain.push(await createRun(`chunk ${round}, no subscriptions`, chunk));
          continue;
        }
        if (!ids.length) ids = await subscribeMany(host.api, SUBSCRIPTIONS, target, filterOf);
        const before = await deliveryRows();
        filtered.push(await createRun(`chunk ${round}, ${SUBSCRIPTIONS} filtered subscriptions`, chunk));
        const after = await deliveryRows();
        if (before !== null && after !== null) {
          written += after - before;
          sqlMeasured = true;
        }
        for (const id of ids) {
          const page = await host.api.expect<unknown[]>(200, "GET", `/v1/ext/webhooks/${id}/deliveries?limit=500`);
          logged += page.body.length;
        }
      }
    } finally {
      await unsubscribeAll(host.api, ids);
    }

    const sum = (runs: CreateRun[]) => runs.reduce((t, r) => t + r.wallMs, 0);
    const cost = sum(filtered) / sum(plain);
    const rate = (runs: CreateRun[]) => (runs.reduce((t, r) => t + r.ok, 0) * 1000) / sum(runs);
    const pairs = plain.map((p, i) => filtered[i]!.wallMs / p.wallMs).sort((a, b) => a - b);
    const medianPair = pairs[Math.floor(pairs.length / 2)]!;
    host.figures.push(
      {
        item: ITEM,
        metric: `${count.toLocaleString("en-US")} item creates with ${SUBSCRIPTIONS} filtered-out subscriptions ÷ with none (median of ${pairs.length} paired chunks' wall times)`,
        value: medianPair,
        display: `${ratio(medianPair)} (totals ${ratio(cost)}: ${(sum(filtered) / 1000).toFixed(1)} s vs ${(sum(plain) / 1000).toFixed(1)} s, ${Math.round(rate(filtered))} vs ${Math.round(rate(plain))} items/s)`,
        target: { op: "<=", limit: TARGET_RATIO, text: `≤ ${TARGET_RATIO.toFixed(2)}x` },
      },
      {
        item: ITEM,
        metric: `Delivery rows written by the filtered runs (${sqlMeasured ? "SQL count of webhook_deliveries" : "delivery logs through the API"})`,
        value: sqlMeasured ? written : logged,
        display: `${sqlMeasured ? written : logged} (delivery logs: ${logged})`,
        target: { op: "<=", limit: 0, text: "0" },
      },
    );
    const row = (what: string, r: CreateRun, i: number) =>
      `| ${what} | ${i + 1} | ${(r.wallMs / 1000).toFixed(2)} | ${Math.round((r.ok * 1000) / r.wallMs)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.ok} |`;
    host.details.push(
      "",
      `Subscription filters (issue 25): ${count.toLocaleString("en-US")} creates of each kind in ${chunks} runs of ${chunk.toLocaleString("en-US")}, interleaved (A B B A ...), ${host.o.connections} connections; ` +
        `the ${SUBSCRIPTIONS} item.created REST hooks (${SUBSCRIPTIONS - STAGE_FILTERED} filtered to another pipeline, ${STAGE_FILTERED} to the demo pipeline's last stage) exist only during the filtered runs:`,
      "",
      "| Run | Chunk | wall s | items/s | p50 ms | p99 ms | 2xx |",
      "|---|---|---|---|---|---|---|",
      ...plain.flatMap((r, i) => [row("no subscriptions", r, i), row(`${SUBSCRIPTIONS} filtered subscriptions`, filtered[i]!, i)]),
      "",
    );
  });
}

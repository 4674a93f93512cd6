/**
 * `npm run bench` (issue #4): a reproducible benchmark of the Stageline server that prints a table and writes it to
 * bench/results/latest.md (quick.md with --quick, custom.md for customised runs), with the command line, machine,
 * versions and every figure.
 *
 * It starts the built server (`node server/dist/main.js`) on a fresh database, pinned to core 0, and drives it from
 * this process (pinned to core 1) with autocannon. Ratios are measured inside one run, server and bare baseline in
 * alternating rounds, because absolute numbers drift on shared machines. See `--help` and bench/README.md.
 *
 * Exit codes: 0 done; 1 errors (non-2xx responses, a crashed server, stalled deliveries, bad options);
 * 3 a PostgreSQL target was missed (full runs only; `--no-assert` turns this off; `--quick` never asserts speeds).
 */
import os from "node:os";
import path from "node:path";
import { isDefaultRun, parseOptions, USAGE, type BenchOptions } from "./lib/options";
import { BenchPass, SERVER_CORE } from "./lib/pass";
import { commandLine, packageVersion, renderReport, verdict, writeReport, type PassReport } from "./lib/report";
import { hasTaskset, pinSelf, REPO_ROOT } from "./lib/server-process";

const LOAD_CORE = 1;

const METHOD = [
  "- **Server**: the built server (`node server/dist/main.js`, NODE_ENV=test, LOG_LEVEL=warn) on a fresh database: a new PGlite data directory, or a new schema `bench_*` on the PostgreSQL of DATABASE_URL (dropped afterwards). The demo company it seeds on first start (pipeline \"Sales\" with custom fields email and deal_value) is the benchmark company, reached with the printed demo API key.",
  "- **Rate limiting stays on** (express-rate-limit with the database counter: one upsert per request, made in the API-key lookup's own statement); the per-key limit is raised with RATE_LIMIT_PER_MINUTE so one key can carry the load.",
  "- **Seeding**: items are bulk-inserted with `INSERT ... SELECT FROM generate_series` (not through the API), `created_at` one second apart, short ids continuing the pipeline's counter; PGlite is single-process, so for the PGlite pass the server is stopped while the bench opens its data directory, then restarted.",
  "- **Bare baselines** (items 1 and 2): Express 5 without auth, rate limit, validation, logging or outbox: the list handler runs one SQL statement (items joined to pipeline, stage and status names, same order and index as the server) and formats the same Item JSON; the create handler runs one `INSERT ... RETURNING` of the same row. On PostgreSQL it uses a `pg` pool of the same size as the server's on the same schema. On PGlite it opens its own copy of the server's data directory taken right after seeding (PGlite cannot be shared between processes), so both read identical rows; the bench checks that both first pages hold the same items. The baseline runs on the same core as the server, never at the same time.",
  "- **Load**: autocannon in the bench process. After every server start the server first serves list requests for twice the warm-up time (a cold server would make the first figure look worse), and every endpoint gets its own warm-up before it is measured; after every run the bench waits until the server has worked off what was still queued. A figure is the mean of the rounds (worst p99 across rounds); server and baseline alternate round by round. Req/s counts 2xx responses only; any non-2xx response, connection error or request unanswered after 30 s (the time Zapier gives an API call) makes the run an error.",
  "- **Page cost** (item 4): the first page and the page after the item 90% deep (cursor built the server's way, base64url of `[created_at, id]`, and checked to return the expected 100 items), at each table size; the cost ratio is req/s at the small size ÷ req/s at the large size.",
  "- **Filtered pages** (issue 11): the first page of 100 for each items-list filter (`stage_id`, `name`, `short_id`, `q`, `updated_after`, chosen so that each matches the same rows at every size; the `name` filter is first checked to find the seeded item 90% deep), at each table size; the cost ratio is req/s at the small size ÷ req/s at the large size.",
  "- **Delete** (issue 25): `DELETE /v1/ext/items/{id}` against a bare handler doing the same writes in one transaction (lock the company and the item with its names, lock its tasks, erase its earlier events with their pending deliveries and excerpts, replace its stored create responses, insert the audit row, unlink the tasks, delete the row, insert the item.deleted event). Rounds of a fixed number of deletes (each item can be deleted once), server and bare alternating; every round deletes items made just before through the API (on PGlite the bare copy deletes items its own POST /items made). The ratio is printed beside create's ratio of the same run.",
  "- **Item 3**: GET picks a random item among the first 10k seeded ones per request; PATCH gives each connection its own item and sends the version from the previous response with a changed deal_value (no 409s expected).",
  "- **Webhooks** (item 5): a local receiver (in the bench process) answers 200 at once and verifies every Standard Webhooks signature. Latency: items created one at a time every 50 ms with one item.created subscription; measured from the API's 201 response to receipt (same clock), with created_at → receipt beside it. Throughput: a burst of creates with N subscriptions (each create fans out to N deliveries); the target figure is the drain rate after the last create has answered (the dispatcher alone working off the backlog: deliveries after that moment ÷ time to the last receipt), with the whole-burst rate (creates and deliveries sharing the core) beside it.",
  "- **Tasks** (item 8, issue 12): `POST /v1/ext/tasks` with an `item_id` (one seeded item, so every create checks and locks the same reference) and a unique title per request, first with no webhook subscriptions, then with 2 `task.created` subscriptions (each create also queues 2 deliveries, sent to a local receiver while the load runs); `PATCH /v1/ext/tasks/{id}` gives each connection its own task and changes its title every request (a real change with its `task.updated` event). Server figures only: no bare baseline and no target.",
  "- **Isolation** (item 9, issue 17): the demo company's one healthy endpoint (the local receiver, a fresh subscription per measurement) gets item.created events created one at a time 200 ms apart, beside 0, 100 and 1,000 endpoints of another company (made with the admin CLI, subscribed through the API) that accept the TCP connection and never answer, fed one item.created event per second (each fanned out to all of them) from 3 s before; latency from the 201 response to receipt, an event not delivered within the phase's wait counting as infinitely late. Target: p99 with the most endpoints ≤ 2 × p99 with none + 200 ms. The server is restarted for the phase with the environment of `PHASE_SERVER_ENV` (bench/lib/isolation.ts).",
  "- **Backlog** (item 9, issue 17, PostgreSQL only): another company's 1,000 subscriptions to a closed local port (connections refused), then 10,000 and 1,000,000 pending deliveries inserted with bulk SQL behind them (server stopped meanwhile, restarted after). Claim cost: the server's `claimDueDeliveries` (server/dist) called directly as an idle dispatcher's full claim with the default options, each call rolled back, p50/p99 of 50 calls, and its statements under `EXPLAIN (ANALYZE, BUFFERS)`: as found, and (with per-subscription queues) with every failing queue and head made due inside the rolled-back transaction; healthy latency as in the isolation phase. Targets at 1M: healthy p99 < 500 ms, claim p99 < 20 ms (the every-queue-due claim where measured).",
  "- **Client** (item 10, issue 21): another company (admin CLI) with a pipeline shaped like the demo one holding the largest client count of items (bulk SQL, seeded with the demo items in the same server stop on PGlite). Each run is a fresh `node` child (bench/lib/client-child.cjs, no TypeScript loader, on the load generator's core, with the V8 settings `npm start` gives the server: young generation at most 8 MB per semi-space, see bench/README.md) that reads the pipeline newest first in pages of 100 until it has seen N items: first each reader alone, through `@stageline/client`'s `items.iterate` or through `fetch` following `Link: rel=\"next\"` by hand (items/s from the first request to the N-th item; peak RSS from `process.resourceUsage().maxRSS`; the heap still in use after a full GC at the end), then both readers in one process page by page in turn, each reader's own time summed, for the throughput ratio (median of at least 3 such rounds outside --quick), after one untimed raw pass over the largest count. The N-th item is checked to be seeded item N. Per-call overhead: one child alternates `items.get(id)` and a raw `fetch` + JSON parse of the same random id, one call at a time, 200 untimed pairs then the timed ones; overhead = p50(client) − p50(raw). Targets: iterate ≥ 0.90x raw (paired), peak RSS at the largest count ≤ 1.10x the smallest, overhead < 1 ms.",
  "- **Subscription filters** (item 11, issue 25): the demo company gets a second pipeline (admin CLI). N items (10,000; 1,000 with --quick) are created through the API in the demo pipeline's first stage with no webhook subscriptions, and N with 100 item.created REST hooks subscribed through the API whose filters exclude every one of them (80 `pipeline_id` of the other pipeline, 20 the demo pipeline with its last `stage_id`), in 10 chunks of each kind (2 with --quick) interleaved A B B A ... after one untimed warm-up chunk; the subscriptions exist only during the filtered chunks; requests are sent by 32 keep-alive `fetch` workers and each chunk is timed from its first request to its last response. Figures: the median over the chunk pairs of filtered ÷ plain wall time (target ≤ 1.10x; a median because other work on a shared machine comes in bursts that hit single chunks; the ratio of the totals beside it) and the delivery rows the filtered chunks wrote (SQL count of webhook_deliveries around each on PostgreSQL; every subscription's delivery log through the API on both databases; target 0).",
  "- **Note renderer** (item 15, issue 30, `markdown`): no server or database: the server's built `renderNoteBody` (server/dist/console/note-markdown.js) called in the bench process (the load generator's core) on each pathological body of the unit test (server/test/helpers/pathological-note-bodies.ts: 65,536 characters, the contract's largest note, of one repeated unit each: quotes, ampersands, brackets, unclosed emphasis, bare URLs, e-mail addresses, images, empty headings). One untimed render of every body first, then rounds (10; 3 with --quick) rendering every body once in turn; each render timed alone with `performance.now()`. Figure: the worst single timed render (target ≤ 500 ms); each body's median, worst and cold first render in the details. A rendering over NOTE_HTML_MAX is an error.",
  "- **RSS** (item 6): VmRSS of the server process from /proc every 200 ms during every measured phase of items 1-8 (not the issue-17 phases, whose server runs other companies' backlogs); the peak is reported.",
  "- **Console** (item 7, issue 10): at the largest size, a paused console webhook endpoint gets a delivery log of as many finished deliveries as there are items (bulk SQL, with their events and attempts); the bench signs in as the demo user through the sign-in form (CSRF token and cookie, as a browser) and loads each page with the session cookie from 2 concurrent clients, timing each request to the end of its HTML; p95 is the exact nearest-rank percentile of the timed loads, and each page's HTML is checked (50 rows, the expected first item or outcome).",
  "- **Profiling**: `BENCH_CPU_PROF=1` runs the server under `node --cpu-prof`; the report then lists self time by package and the hottest functions (combine with `--only <phase>` to profile one endpoint).",
];

function settings(o: BenchOptions, pinned: boolean): string[] {
  const pinning = hasTaskset()
    ? `server and baseline pinned to core ${SERVER_CORE} with taskset; the load generator ${pinned ? `pinned to core ${LOAD_CORE}` : "not pinned (could not)"}${o.dbs.includes("postgres") ? "; PostgreSQL itself is not pinned" : ""}`
    : "taskset not available: nothing is pinned (figures are less stable)";
  return [
    `Load: autocannon, ${o.connections} connections, ${o.duration} s per measurement after ${o.warmup} s warm-up, ${o.rounds} alternating round(s) for the ratios`,
    `Cores: ${os.cpus().length}; ${pinning}`,
    `Table sizes: ${o.sizes.map((s) => s.toLocaleString("en-US")).join(", ")} items; phases: ${[...o.phases].join(", ")}; webhook subscriptions: ${o.subscriptions}; pool size: ${o.poolSize}`,
    `Issue 21: client phase iterates ${o.clientSizes.map((s) => s.toLocaleString("en-US")).join(", ")} items; ${o.clientCalls.toLocaleString("en-US")} timed items.get calls of each kind`,
    `Issue 17: never-answering endpoints ${o.deadEndpoints.join(", ")}; ${o.isolationEvents} healthy events per measurement, waited for up to ${o.isolationCapS} s; backlog ${o.backlogPending.toLocaleString("en-US")} pending deliveries behind ${o.backlogSubscriptions.toLocaleString("en-US")} subscriptions`,
  ];
}

async function main(): Promise<number> {
  let options: BenchOptions | "help";
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${USAGE}\n`);
    return 1;
  }
  if (options === "help") {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const o = options;
  const startedAt = new Date();
  const loadBefore = os.loadavg();
  const pinned = os.cpus().length >= 2 && pinSelf(LOAD_CORE);
  const log = (line: string) => process.stdout.write(`${line}\n`);
  log(`Stageline benchmark${o.quick ? " (quick)" : ""}: ${o.dbs.join(" + ")}, ${o.connections} connections, ${o.duration} s runs`);

  const passes: PassReport[] = [];
  for (const db of o.dbs) {
    log(`\n== ${db}`);
    passes.push(await new BenchPass(db, o, log).run());
  }

  const versions: Record<string, string> = {
    node: process.version,
    "@prisma/client": packageVersion("@prisma/client"),
    express: packageVersion("express"),
    pg: packageVersion("pg"),
    "@electric-sql/pglite": packageVersion("@electric-sql/pglite"),
    autocannon: packageVersion("autocannon"),
  };
  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(" / ");
  const machineLoad = `Load average (1/5/15 min) before the run: ${load(loadBefore)}; after: ${load(os.loadavg())} (other work on the machine skews absolute figures; the ratios less so)`;
  const node = `Node binary: ${path.relative(REPO_ROOT, process.execPath).startsWith("node_modules") ? `${path.relative(REPO_ROOT, process.execPath)} (the \`node\` package npm scripts put first on PATH)` : process.execPath}`;
  const info = { commandLine: commandLine(), startedAt, finishedAt: new Date(), quick: o.quick, settings: [...settings(o, pinned), machineLoad, node], versions };
  const markdown = renderReport(info, passes, METHOD);
  const kind = !isDefaultRun(o) ? "custom" : o.quick ? "quick" : "latest";
  const file = writeReport(path.join(REPO_ROOT, "bench/results"), kind, markdown, { info, options: { ...o, phases: [...o.phases] }, passes });
  log(`\n${markdown}`);
  log(`Written to ${path.relative(process.cwd(), file)}`);

  const errors = passes.flatMap((p) => p.errors.map((e) => `${p.db}: ${e.split("\n")[0]}`));
  if (errors.length) {
    log(`\n${errors.length} error(s):\n${errors.map((e) => `  - ${e}`).join("\n")}`);
    return 1;
  }
  const missed = passes.filter((p) => p.asserted).flatMap((p) => p.figures.filter((f) => verdict(f) === "miss" || verdict(f) === "no data").map((f) => `${p.db}: ${f.metric}`));
  if (missed.length && o.assert) {
    log(`\nTargets missed (exit 3; --no-assert to ignore):\n${missed.map((m) => `  - ${m}`).join("\n")}`);
    return 3;
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`benchmark failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);

/**
 * Issue 17: does one company's failing webhook endpoints slow another company's deliveries?
 *
 * - `isolation` phase (both databases): the demo company's one healthy endpoint (a local receiver that answers 200
 *   at once) gets paced item.created events while another company has 0, 100 or 1,000 endpoints that accept the
 *   TCP connection and never answer, fed with its own item.created events all along. Figure: healthy latency p50/p99
 *   from the create's 201 response to receipt, with "n of m delivered within X s" when some never arrive.
 * - `backlog` phase (PostgreSQL only): another company's 1,000 subscriptions whose targets refuse connections, with
 *   1,000,000 pending deliveries behind them (bulk SQL, not the API): the cost of the dispatcher's claim
 *   (claim-probe.ts: `EXPLAIN (ANALYZE, BUFFERS)` and 50 timed calls), first with 10,000 pending, then with the
 *   full backlog, and the healthy endpoint's latency.
 *
 * The server is a black box started the bench's usual way (server-process.ts) with `PHASE_SERVER_ENV` added: the
 * one place for a phase's server settings. The other company, its key and pipeline come from the admin CLI
 * (`node server/dist/admin/cli.js`, which on PGlite goes through the running server), its subscriptions and items
 * from the external API.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import { ApiClient } from "./api";
import { CLAIM_OPTIONS, probeClaim, topBuffers, type ClaimProbeResult } from "./claim-probe";
import type { Sql } from "./db";
import { ms, percentile, sizeLabel, sleep } from "./format";
import type { BenchOptions } from "./options";
import { nowMs, WebhookReceiver } from "./receiver";
import type { Figure } from "./report";
import { REPO_ROOT } from "./server-process";

/**
 * Server environment of each issue-17 phase, added to the bench's usual server environment (server-process.ts).
 * Empty = the dispatcher's defaults (server/src/webhooks/dispatcher.ts: WEBHOOK_CONCURRENCY 16, WEBHOOK_TIMEOUT_MS
 * 10000, ...), which is what the issue measures. A dispatcher setting to try goes here, or into the bench's own
 * environment (`WEBHOOK_TIMEOUT_MS=2000 npm run bench -- --only isolation`), which every server start inherits.
 */
export const PHASE_SERVER_ENV: Record<"isolation" | "backlog", Record<string, string>> = {
  isolation: {},
  backlog: {},
};

/** Milliseconds between the healthy company's creates: well below what one endpoint answering at once can take. */
const HEALTHY_PACE_MS = 200;
/** Milliseconds between the other company's creates (each fans out to every one of its endpoints). */
const DEAD_PACE_MS = 1000;
/** The other company's events run this long before the healthy events start, so its endpoints are already busy. */
const DEAD_LEAD_MS = 3000;
/** Subscriptions created (or deleted) at once through the API. */
const API_PARALLELISM = 8;
/** Pending deliveries of the small backlog variant (the claim's EXPLAIN at 10k). */
const SMALL_BACKLOG = 10_000;
/** Pending deliveries inserted per statement. */
const BACKLOG_BATCH = 100_000;

/** What the pass lends the phases: its server, API client, output lists. */
export interface PhaseHost {
  kind: "pglite" | "postgres";
  o: BenchOptions;
  /** The demo (healthy) company's client; its base URL follows server restarts. */
  api: ApiClient;
  /** The server's DATA_DIR (PGlite data and the admin CLI's handshake file). */
  dataDir: string;
  /** The PostgreSQL URL with `?schema=` (PostgreSQL pass only). */
  databaseUrl?: string;
  /** Direct SQL on the benchmark database (PostgreSQL pass only). */
  sql?: Sql;
  tmpDir: string;
  /** Body of one create for the demo company (custom fields filled in), `tag` made unique. */
  itemBody(tag: string): unknown;
  /** Stops the server if it runs, then starts it with `env` added. */
  restartServer(label: string, env: Record<string, string>): Promise<void>;
  stopServer(): Promise<void>;
  assertAlive(): void;
  during<T>(phase: string, fn: () => Promise<T>): Promise<T>;
  log(line: string): void;
  figures: Figure[];
  details: string[];
  notes: string[];
  errors: string[];
}

/**
 * A receiver whose endpoints accept the connection, read the request and never answer (until `dropAll()` or
 * `stop()`), like a hung server behind a load balancer. Counts requests and the connections held open.
 */
export class DeadReceiver {
  requests = 0;
  private readonly sockets = new Set<Socket>();
  private server?: http.Server;
  url = "";

  async start(): Promise<void> {
    this.server = http.createServer((req) => {
      this.requests++;
      req.resume(); // read the body, never answer
    });
    this.server.on("connection", (s: Socket) => {
      this.sockets.add(s);
      s.on("close", () => this.sockets.delete(s));
    });
    this.server.requestTimeout = 0;
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Connections currently held open (requests waiting for an answer that never comes). */
  get held(): number {
    return this.sockets.size;
  }

  /** Closes every held connection (the senders see a reset), freeing whatever waits on them. */
  dropAll(): void {
    for (const s of this.sockets) s.destroy();
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.dropAll();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }
}

/** A 127.0.0.1 port nothing listens on (bound once by the OS, then closed): connections to it are refused. */
export async function refusedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Another company with an API key (all scopes) and a one-stage pipeline, made with the admin CLI. */
export interface Tenant {
  companyId: string;
  /** Its base URL is the server's at creation: valid until the server restarts. */
  api: ApiClient;
  pipelineId: string;
  stageId: string;
}

/** The default pipeline of `createTenant`: one stage (with the default statuses), no custom fields. */
const ONE_STAGE_PIPELINE = { name: "Isolation", short_id_prefix: "ISO", stages: [{ name: "Lead" }] };

/**
 * Creates a company, an API key and a pipeline through `node server/dist/admin/cli.js ... --json`, against the
 * running server's database (PGlite: through the server, via the handshake file in DATA_DIR).
 * @param pipeline the pipeline import file (CONTRACT "Pipelines, blueprints, transitions"); one stage by default.
 * @throws when a CLI command fails (its stderr is quoted).
 */
export async function createTenant(host: PhaseHost, name: string, pipeline: object = ONE_STAGE_PIPELINE): Promise<Tenant> {
  const cli = <T>(args: string[]) => adminCli<T>(host, args);
  const company = await cli<{ id: string }>(["companies", "create", "--name", name]);
  const key = await cli<{ key: string }>(["keys", "create", "--company", company.id, "--name", "bench"]);
  const file = path.join(host.tmpDir, `pipeline-${company.id}.json`);
  fs.writeFileSync(file, JSON.stringify(pipeline));
  const imported = await cli<{ id: string; stages: { id: string }[] }>(["pipelines", "import", "--company", company.id, "--file", file]);
  const api = new ApiClient(host.api.baseUrl, key.key);
  return { companyId: company.id, api, pipelineId: imported.id, stageId: imported.stages[0]!.id };
}

/**
 * Runs `node server/dist/admin/cli.js <args> --json` against the running server's database (PGlite: through the
 * server, via the handshake file in DATA_DIR) and parses its JSON output.
 * @throws when the command fails (its stderr is quoted).
 */
export async function adminCli<T>(host: Pick<PhaseHost, "dataDir" | "databaseUrl">, args: string[]): Promise<T> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: host.dataDir, NODE_ENV: "test", LOG_LEVEL: "warn" };
  if (host.databaseUrl) env.DATABASE_URL = host.databaseUrl;
  else delete env.DATABASE_URL;
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [path.join(REPO_ROOT, "server/dist/admin/cli.js"), ...args, "--json"], { env, cwd: REPO_ROOT });
    return JSON.parse(stdout) as T;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`admin CLI ${args.slice(0, 2).join(" ")} failed: ${(e.stderr || e.message).slice(0, 400)}`);
  }
}

/** Runs `fn` over `items` with at most `parallel` calls in flight. */
async function inParallel<T, R>(items: T[], parallel: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, items.length) }, worker));
  return out;
}

/**
 * Subscribes `count` item.created REST hooks of `api`'s company to `urlOf(n)`, each with `filterOf(n)` as its filter
 * when given (CONTRACT "Subscription filters"). @returns their ids.
 */
export async function subscribeMany(api: ApiClient, count: number, urlOf: (n: number) => string, filterOf?: (n: number) => object): Promise<string[]> {
  const numbers = Array.from({ length: count }, (_, n) => n);
  return inParallel(numbers, API_PARALLELISM, async (n) => {
    const body = { target_url: urlOf(n), event: "item.created", ...(filterOf ? { filter: filterOf(n) } : {}) };
    const res = await api.expect<{ id: string }>(201, "POST", "/v1/ext/webhooks", body);
    return res.body.id;
  });
}

/** Deletes the REST hooks `ids` of `api`'s company (their pending deliveries go with them). */
export async function unsubscribeAll(api: ApiClient, ids: string[]): Promise<void> {
  await inParallel(ids, API_PARALLELISM, (id) => api.call("DELETE", `/v1/ext/webhooks/${id}`));
}

/** Creates one item of `tenant` every `paceMs` until stopped. @returns stop(), resolving with the count created. */
function feedEvents(tenant: Tenant, paceMs: number): () => Promise<number> {
  let running = true;
  let created = 0;
  const loop = (async () => {
    while (running) {
      const start = nowMs();
      const res = await tenant.api.call("POST", "/v1/ext/items", { name: `Other lead ${created}`, pipeline_id: tenant.pipelineId, stage_id: tenant.stageId });
      if (res.status === 201) created++;
      const wait = paceMs - (nowMs() - start);
      if (running && wait > 0) await sleep(wait);
    }
  })();
  return async () => {
    running = false;
    await loop;
    return created;
  };
}

/** Healthy-endpoint latencies of one measurement. */
export interface HealthyLatency {
  sent: number;
  delivered: number;
  /** ms from each create's 201 response to receipt, delivered events only. */
  fromResponse: number[];
  /** ms from each delivered item's created_at to receipt. */
  fromCreatedAt: number[];
  capS: number;
  /** Nearest-rank percentiles over all sent events, an undelivered one counting as infinitely late. */
  p50: number;
  p99: number;
}

/**
 * Subscribes a fresh local receiver for the demo company, creates `events` items `HEALTHY_PACE_MS` apart, waits for
 * their deliveries up to `capS` seconds after the last create, then removes the subscription (its undelivered
 * deliveries go with it).
 */
export async function measureHealthy(host: PhaseHost, tag: string, events: number, capS: number): Promise<HealthyLatency> {
  const receiver = new WebhookReceiver();
  await receiver.start();
  const target = `/healthy/${tag}`;
  const sub = await host.api.expect<{ id: string; secret?: string }>(201, "POST", "/v1/ext/webhooks", { target_url: receiver.url + target, event: "item.created" });
  if (sub.body.secret) receiver.setSecret(target, sub.body.secret);
  const sent = new Map<string, number>();
  try {
    for (let n = 0; n < events; n++) {
      const start = nowMs();
      const res = await host.api.expect<{ item_id: string }>(201, "POST", "/v1/ext/items", host.itemBody(`${tag}-${n}`));
      sent.set(res.body.item_id, nowMs());
      const wait = HEALTHY_PACE_MS - (nowMs() - start);
      if (wait > 0) await sleep(wait);
    }
    await receiver.waitForTotal(events, capS * 1000);
  } finally {
    await host.api.call("DELETE", `/v1/ext/webhooks/${sub.body.id}`);
    await receiver.stop();
  }
  if (receiver.badSignatures) host.errors.push(`${tag}: ${receiver.badSignatures} healthy deliveries had a signature that does not verify`);
  const fromResponse: number[] = [];
  const fromCreatedAt: number[] = [];
  for (const d of receiver.deliveries) {
    const t = d.itemId ? sent.get(d.itemId) : undefined;
    if (t === undefined) continue;
    fromResponse.push(d.receivedAt - t);
    if (d.createdAt) fromCreatedAt.push(d.receivedAt - Date.parse(d.createdAt));
  }
  const all = [...fromResponse, ...new Array<number>(Math.max(0, events - fromResponse.length)).fill(Infinity)];
  return { sent: events, delivered: fromResponse.length, fromResponse, fromCreatedAt, capS, p50: percentile(all, 50), p99: percentile(all, 99) };
}

/** A figure's value: the latency, or its lower bound (the wait) when some event never arrived. */
const bounded = (v: number, capS: number) => (Number.isFinite(v) ? v : capS * 1000);

/** "123 ms", or "> 120 s" for an event that never arrived. */
const late = (v: number, capS: number) => (Number.isFinite(v) ? ms(v) : `> ${capS} s`);

function latencyText(r: HealthyLatency): string {
  const missing = r.sent - r.delivered;
  return `p50 ${late(r.p50, r.capS)}, p99 ${late(r.p99, r.capS)}${missing ? ` (${r.delivered} of ${r.sent} delivered within ${r.capS} s)` : ""}`;
}

const seconds = (fromMs: number) => `${((Date.now() - fromMs) / 1000).toFixed(1)} s`;

/**
 * The `isolation` phase: healthy latency beside each count of never-answering endpoints (`o.deadEndpoints`). Each
 * measurement starts from no dead subscriptions: they are created through the API, the other company's events run
 * for `DEAD_LEAD_MS`, the healthy events are sent and waited for (bounded), then the dead subscriptions are deleted
 * and their held connections dropped.
 */
export async function runIsolationPhase(host: PhaseHost): Promise<void> {
  const { o } = host;
  const phaseStart = Date.now();
  await host.restartServer("isolation", PHASE_SERVER_ENV.isolation);
  await measureHealthy(host, "isolation-warm-up", 5, 5); // a fresh server is cold (JIT, pool): not measured
  const tenant = await createTenant(host, "Isolation: never-answering endpoints");
  const dead = new DeadReceiver();
  await dead.start();
  const rows: { dead: number; r: HealthyLatency; otherEvents: number; held: number; deadRequests: number; setupS: string }[] = [];
  try {
    for (const count of o.deadEndpoints) {
      await host.during(`isolation: healthy endpoint beside ${count} never-answering endpoints`, async () => {
        const setupStart = Date.now();
        const ids = await subscribeMany(tenant.api, count, (n) => `${dead.url}/dead/${n}`);
        const setupS = seconds(setupStart);
        const requestsBefore = dead.requests;
        const stop = count ? feedEvents(tenant, DEAD_PACE_MS) : async () => 0;
        try {
          if (count) await sleep(DEAD_LEAD_MS);
          const held = dead.held;
          const r = await measureHealthy(host, `isolation-${count}`, o.isolationEvents, o.isolationCapS);
          const otherEvents = await stop();
          rows.push({ dead: count, r, otherEvents, held, deadRequests: dead.requests - requestsBefore, setupS });
          host.log(`    ${count} dead endpoints: healthy ${latencyText(r)}; the other company created ${otherEvents} items, its endpoints got ${dead.requests - requestsBefore} requests`);
        } finally {
          await stop();
          await unsubscribeAll(tenant.api, ids);
          dead.dropAll();
          host.assertAlive();
        }
      });
    }
  } finally {
    await dead.stop();
  }
  for (const { dead: count, r } of rows) {
    host.figures.push({
      item: 9,
      metric: `Isolation: healthy delivery p99 beside ${count.toLocaleString("en-US")} never-answering endpoints (201 → receipt)`,
      value: bounded(r.p99, r.capS),
      display: `${late(r.p99, r.capS)} (p50 ${late(r.p50, r.capS)}; ${r.delivered} of ${r.sent} delivered within ${r.capS} s)`,
    });
  }
  const base = rows.find((x) => x.dead === 0);
  const worst = rows.reduce<(typeof rows)[number] | undefined>((a, b) => (b.dead > 0 && (!a || b.dead > a.dead) ? b : a), undefined);
  if (base && worst && Number.isFinite(base.r.p99)) {
    const limit = 2 * base.r.p99 + 200;
    const figure = host.figures.find((f) => f.metric.includes(`beside ${worst.dead.toLocaleString("en-US")} never`))!;
    figure.target = { op: "<=", limit, text: `≤ 2 × p99 with none + 200 ms = ${ms(limit)}` };
  }
  host.details.push(
    "",
    `Isolation (issue 17): ${o.isolationEvents} item.created events of the demo company, ${HEALTHY_PACE_MS} ms apart, to one local endpoint answering 200 at once; another company's endpoints accept the connection and never answer, fed one item.created event every ${DEAD_PACE_MS} ms (each fanned out to all of them) from ${DEAD_LEAD_MS / 1000} s before the healthy events until they were all in or ${o.isolationCapS} s after the last one. Server environment added: ${JSON.stringify(PHASE_SERVER_ENV.isolation)}${inheritedWebhookEnv()}. Phase took ${seconds(phaseStart)}.`,
    "",
    "| Never-answering endpoints | healthy p50 | healthy p99 | delivered | created_at → receipt p50 | other company's events | requests to them | connections held at start | subscribe time |",
    "|---|---|---|---|---|---|---|---|---|",
    ...rows.map(
      ({ dead: count, r, otherEvents, held, deadRequests, setupS }) =>
        `| ${count.toLocaleString("en-US")} | ${late(r.p50, r.capS)} | ${late(r.p99, r.capS)} | ${r.delivered} of ${r.sent} within ${r.capS} s | ${r.fromCreatedAt.length ? ms(percentile(r.fromCreatedAt, 50)) : "-"} | ${otherEvents} | ${deadRequests} | ${held} | ${setupS} |`,
    ),
    "",
  );
}

/** WEBHOOK_* variables of the bench's own environment, which the server inherits. */
function inheritedWebhookEnv(): string {
  const set = Object.entries(process.env).filter(([k]) => k.startsWith("WEBHOOK_"));
  return set.length ? `; inherited from the bench's environment: ${set.map(([k, v]) => `${k}=${v}`).join(" ")}` : "";
}

/**
 * Inserts pending item.created events of `tenant` numbered `from..to` (1-based) and one pending delivery per event
 * and subscription of the tenant, due now, in batches of about BACKLOG_BATCH deliveries. Events take their `seq`
 * from the table's sequence in number order, and each delivery copies its event's seq, as the outbox does.
 */
async function insertBacklog(sql: Sql, tenant: Tenant, subscriptions: number, from: number, to: number, onProgress: (events: number) => void): Promise<void> {
  const eventId = `(substr(h,1,8)||'-'||substr(h,9,4)||'-4'||substr(h,14,3)||'-8'||substr(h,18,3)||'-'||substr(h,21,12))`;
  const step = Math.max(1, Math.floor(BACKLOG_BATCH / subscriptions));
  const wakeups = (await sql.query<{ t: string | null }>(`SELECT to_regclass('webhook_queue_wakeups')::text AS t`))[0]?.t != null;
  for (let start = from; start <= to; start += step) {
    const end = Math.min(to, start + step - 1);
    await sql.exec("BEGIN");
    try {
      await sql.query(
        `INSERT INTO webhook_events (id, company_id, type, resource_id, payload, created_at)
         SELECT ${eventId}, $1::text, 'item.created', 'backlog-' || g, json_build_object('item_id', 'backlog-' || g, 'name', 'Backlog lead ' || g), now()
           FROM generate_series($2::int, $3::int) AS g, LATERAL (SELECT md5('stageline-bench-backlog:' || $1::text || ':' || g) AS h) m
          ORDER BY g`,
        [tenant.companyId, start, end],
      );
      await sql.query(
        `INSERT INTO webhook_deliveries (id, event_id, subscription_id, seq, state, attempt_count, next_attempt_at, created_at)
         SELECT gen_random_uuid()::text, e.id, s.id, e.seq, 'pending', 0, now(), now()
           FROM generate_series($2::int, $3::int) AS g
           CROSS JOIN LATERAL (SELECT md5('stageline-bench-backlog:' || $1::text || ':' || g) AS h) m
           JOIN webhook_events e ON e.id = ${eventId}
           CROSS JOIN webhook_subscriptions s
          WHERE s.company_id = $1::text`,
        [tenant.companyId, start, end],
      );
      // Since per-subscription queues (migration 20261124100000_webhook_queue_heads) the outbox writes a wake-up
      // row per subscription beside its deliveries (db/outbox.ts), which the dispatcher turns into a due queue.
      if (wakeups) await sql.query(`INSERT INTO webhook_queue_wakeups (subscription_id) SELECT id FROM webhook_subscriptions WHERE company_id = $1::text`, [tenant.companyId]);
      await sql.exec("COMMIT");
    } catch (err) {
      await sql.exec("ROLLBACK").catch(() => undefined);
      throw err;
    }
    onProgress(end);
  }
  // Fresh statistics on all three tables, as autovacuum would soon have them. Not optional for a fair figure: with
  // webhook_subscriptions' statistics from before its rows existed, PostgreSQL plans today's claim (commit dbf4b08)
  // as a nested loop that reads every pending delivery once per subscription (minutes at 1M pending).
  await sql.exec("VACUUM (ANALYZE) webhook_subscriptions");
  await sql.exec("VACUUM (ANALYZE) webhook_events");
  await sql.exec("VACUUM (ANALYZE) webhook_deliveries");
}

/** The EXPLAIN ANALYZE execution time of each statement of one claim. */
const explainText = (r: ClaimProbeResult) => r.executionMs.map((x) => (Number.isFinite(x) ? ms(x) : "not analyzed (timeout)")).join(" + ");

function claimText(r: ClaimProbeResult): string {
  if (!r.timesMs.length) return "no call completed";
  const claimed = r.claimed.length ? `, each claiming ${Math.min(...r.claimed)}-${Math.max(...r.claimed)} deliveries` : "";
  const timedOut = r.timedOut ? `; a call exceeded the ${r.timeoutMs / 1000} s statement timeout (counted as ${r.timeoutMs / 1000} s)` : "";
  const deadlocks = r.deadlocks ? `; ${r.deadlocks} call(s) repeated after a deadlock with the dispatcher` : "";
  return `p50 ${ms(percentile(r.timesMs, 50))}, p99 ${ms(percentile(r.timesMs, 99))} over ${r.timesMs.length} calls${claimed}${r.skipped ? ` (${r.skipped} more skipped: time budget)` : ""}${timedOut}${deadlocks}`;
}

/**
 * The `backlog` phase (PostgreSQL only): claim cost at 10k and at `o.backlogPending` pending deliveries behind
 * `o.backlogSubscriptions` subscriptions whose targets refuse connections, and the healthy endpoint's latency with
 * the full backlog. The server is stopped while the rows are inserted and restarted after each insert (its
 * dispatcher then meets the backlog as after a deploy: every head due at once).
 */
export async function runBacklogPhase(host: PhaseHost): Promise<void> {
  const { o } = host;
  if (host.kind !== "postgres" || !host.sql || !host.databaseUrl) {
    host.notes.push("Backlog phase (issue 17): PostgreSQL only (DATABASE_URL), not run on PGlite.");
    return;
  }
  const sql = host.sql;
  const phaseStart = Date.now();
  const subs = o.backlogSubscriptions;
  await host.restartServer("backlog", PHASE_SERVER_ENV.backlog);
  const tenant = await createTenant(host, "Backlog: refusing endpoints");
  const port = await refusedPort();
  const subStart = Date.now();
  await subscribeMany(tenant.api, subs, (n) => `http://127.0.0.1:${port}/refused/${n}`);
  host.log(`    ${subs} subscriptions to refusing targets in ${seconds(subStart)}`);
  const stages = [...new Set([Math.min(SMALL_BACKLOG, o.backlogPending), o.backlogPending])];
  const calls = o.quick ? 10 : 50;
  const budgetMs = o.quick ? 10_000 : 60_000;
  const timeoutMs = o.quick ? 10_000 : 30_000;
  const claims: { pending: number; r: ClaimProbeResult; insertS: string; allDue: boolean }[] = [];
  // With per-subscription queues (next_due_at) the failing queues are mostly backing off when the probe runs, so
  // the claim is also measured with every one of them due (heads and queues made due in the probe's rolled-back
  // transaction, untimed): the most work one claim can meet here.
  const queues = (await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'webhook_subscriptions' AND column_name = 'next_due_at'`))[0]?.n === 1;
  // Queue rows first, in id order, then the deliveries: the dispatcher's lock order (a deadlock is retried anyway).
  const allDue = [
    {
      text: `UPDATE webhook_subscriptions s SET next_due_at = now() - interval '1 second'
              FROM (SELECT id FROM webhook_subscriptions WHERE company_id = $1::text ORDER BY id FOR NO KEY UPDATE) l WHERE s.id = l.id`,
      params: [tenant.companyId],
    },
    {
      text: `UPDATE webhook_deliveries d SET next_attempt_at = now() FROM webhook_subscriptions s
              WHERE s.id = d.subscription_id AND s.company_id = $1::text AND d.state = 'pending' AND d.next_attempt_at > now()`,
      params: [tenant.companyId],
    },
  ];
  let events = 0;
  let healthy: HealthyLatency | undefined;
  for (const pending of stages) {
    const target = Math.max(1, Math.round(pending / subs));
    const insertStart = Date.now();
    await host.stopServer();
    host.log(`  inserting ${sizeLabel((target - events) * subs)} pending deliveries (${target - events} events × ${subs} subscriptions, bulk SQL)`);
    await insertBacklog(sql, tenant, subs, events + 1, target, (done) => {
      if ((target - events) * subs > BACKLOG_BATCH) host.log(`    ${(done * subs).toLocaleString("en-US")} / ${(target * subs).toLocaleString("en-US")}`);
    });
    const insertS = seconds(insertStart);
    events = target;
    await host.restartServer(`backlog-${sizeLabel(pending)}`, PHASE_SERVER_ENV.backlog);
    await sleep(3000); // the dispatcher's first cycles: every head due, each attempt refused
    await host.during(`backlog: claim with ${sizeLabel(pending)} pending`, async () => {
      const n = (await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE state = 'pending'`))[0]?.n ?? 0;
      const r = await probeClaim(host.databaseUrl!, calls, budgetMs, timeoutMs);
      claims.push({ pending: n, r, insertS, allDue: false });
      host.log(`    claim with ${n.toLocaleString("en-US")} pending: ${claimText(r)}; EXPLAIN execution ${explainText(r)}`);
      if (queues) {
        const due = await probeClaim(host.databaseUrl!, calls, budgetMs, timeoutMs, allDue);
        claims.push({ pending: n, r: due, insertS, allDue: true });
        host.log(`    claim with ${n.toLocaleString("en-US")} pending, every failing queue due: ${claimText(due)}; EXPLAIN execution ${explainText(due)}`);
      }
    });
    host.assertAlive();
  }
  await host.during(`backlog: healthy endpoint with ${sizeLabel(o.backlogPending)} pending`, async () => {
    healthy = await measureHealthy(host, "backlog", o.isolationEvents, o.isolationCapS);
    host.log(`    healthy endpoint: ${latencyText(healthy)}`);
  });
  host.assertAlive();

  const large = claims[claims.length - 1]!; // the largest backlog; every queue due when that was measured
  const dueText = (c: (typeof claims)[number]) => (c.allDue ? ", every failing queue due" : queues ? ", as found" : "");
  for (const c of claims) {
    const p99 = c.r.timesMs.length ? percentile(c.r.timesMs, 99) : NaN;
    host.figures.push({
      item: 9,
      metric: `Backlog: dispatcher claim with ${sizeLabel(c.pending)} pending deliveries behind ${subs.toLocaleString("en-US")} failing endpoints${dueText(c)} (p99)`,
      value: p99,
      display: `${!Number.isFinite(p99) ? "no data" : c.r.timedOut ? `> ${c.r.timeoutMs / 1000} s` : ms(p99)} (${claimText(c.r)}; EXPLAIN ANALYZE ${explainText(c.r)})`,
      ...(c === large ? { target: { op: "<" as const, limit: 20, text: "< 20 ms" } } : {}),
    });
  }
  if (healthy) {
    host.figures.push({
      item: 9,
      metric: `Backlog: healthy delivery p99 with ${sizeLabel(large.pending)} pending behind failing endpoints (201 → receipt)`,
      value: bounded(healthy.p99, healthy.capS),
      display: `${late(healthy.p99, healthy.capS)} (p50 ${late(healthy.p50, healthy.capS)}; ${healthy.delivered} of ${healthy.sent} delivered within ${healthy.capS} s)`,
      target: { op: "<", limit: 500, text: "< 500 ms" },
    });
  }
  host.details.push(
    "",
    `Backlog (issue 17): another company's ${subs.toLocaleString("en-US")} item.created subscriptions to http://127.0.0.1:${port}/refused/<n> (nothing listens: every attempt is refused), then pending deliveries inserted with bulk SQL (events × subscriptions, due now, with the server stopped; insert times: ${claims.filter((c) => !c.allDue).map((c) => `${sizeLabel(c.pending)} ${c.insertS}`).join(", ")}); the server restarted and given 3 s before the claim was measured. Claim: the server's \`claimDueDeliveries\` (server/dist/db/webhook-dispatch.js) called directly ${calls} times on its own connection with an idle dispatcher's full claim (claim-probe.ts CLAIM_OPTIONS: ${JSON.stringify(CLAIM_OPTIONS)}), each call rolled back, while the server's dispatcher kept working; then the ${claims[0]?.r.statements ?? "?"} statement(s) of one call under EXPLAIN (ANALYZE, BUFFERS). Healthy: ${o.isolationEvents} events ${HEALTHY_PACE_MS} ms apart, waited for up to ${o.isolationCapS} s after the last. Server environment added: ${JSON.stringify(PHASE_SERVER_ENV.backlog)}${inheritedWebhookEnv()}. Phase took ${seconds(phaseStart)}.`,
  );
  for (const c of claims) {
    host.details.push(
      "",
      `Claim plan with ${c.pending.toLocaleString("en-US")} pending${dueText(c)} (top buffers: ${c.r.plans.map(topBuffers).join(" / ") || "?"}):`,
      "",
      ...c.r.plans.flatMap((p) => ["```", p, "```"]),
    );
  }
  host.details.push("");
}

/**
 * One benchmark pass on one database (PGlite or PostgreSQL): starts a fresh server, seeds the demo company's items
 * in bulk, runs every measurement of issue #4 against the server (and the bare baseline where a ratio is asked
 * for), and returns the figures. Order: page cost at the small size, list, get, patch, create, tasks, webhooks, then the
 * table is grown to the large size and the page cost measured again.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type autocannon from "autocannon";
import { ApiClient } from "./api";
import { startBaseline, type RunningBaseline } from "./baseline-server";
import { openSql, pgliteDirOf, type DbLocation, type Sql } from "./db";
import { mb, ms, percentile, ratio, rps, sizeLabel, sleep } from "./format";
import { combineRounds, failures, runLoad, type LoadOptions, type LoadResult } from "./load";
import type { BenchOptions, Phase } from "./options";
import { prepareClientPhase, runClientPhase, seedClientPipeline, type ClientBench } from "./client-phase";
import { runMcpPhase } from "./mcp-phase";
import { runBacklogPhase, runIsolationPhase, type PhaseHost } from "./isolation";
import { runFiltersPhase } from "./filters";
import { renderProfile, summariseProfile } from "./profile";
import { nowMs, WebhookReceiver } from "./receiver";
import { runOAuthPhase, type OAuthHost } from "./oauth-phase";
import { runNotesPhase, type NotesHost } from "./notes-phase";
import { runUpsertPhase, type UpsertHost } from "./upsert-phase";
import { runBatchPhase } from "./batch-phase";
import { runMarkdownPhase } from "./markdown-phase";
import { runEventsPhase, type EventsHost } from "./events-phase";
import type { Figure, PassReport } from "./report";
import { readRssMb, RssSampler } from "./rss";
import { samplePage, signInConsole, type PageLatency } from "./console";
import {
  keysetCursor,
  seedDeliveryLog,
  seedItems,
  seededDeliveryPosition,
  seededItemId,
  seededItemPosition,
  verifySeededOrder,
  type SeedPlan,
} from "./seed";
import { REPO_ROOT, startServerProcess, type ServerProcess } from "./server-process";

/** Concurrent clients loading console pages (people at their browsers, not a fleet of integrations). */
const CONSOLE_CLIENTS = 2;

/** Cores: the server (and the baseline, never loaded at the same time) on core 0, this process on core 1. */
export const SERVER_CORE = 0;

interface BlueprintField {
  key: string;
  type: string;
  required?: boolean;
  options?: string[];
}

/** A value of the right type for a custom field in a create body (`[<id>]` becomes a unique id per request). */
function sampleValue(field: BlueprintField, n: number | "[<id>]"): unknown {
  switch (field.type) {
    case "email":
      return `bench-${n}@example.com`;
    case "number":
      return typeof n === "number" ? n : 1234;
    case "boolean":
      return true;
    case "date":
      return "2026-01-15";
    case "datetime":
      return "2026-01-15T10:00:00.000Z";
    case "url":
      return `https://example.com/${n}`;
    case "phone":
      return "+15550100";
    case "select":
      return field.options?.[0] ?? null;
    default:
      return `Bench ${n}`;
  }
}

export class BenchPass {
  private server?: ServerProcess;
  private baseline?: RunningBaseline;
  private sql?: Sql;
  private api!: ApiClient;
  private rss?: RssSampler;
  private receiver?: WebhookReceiver;
  private tmpDir = "";
  private dataDir = "";
  private databaseUrl?: string;
  private schema?: string;
  private plan!: SeedPlan;
  private pipelineId = "";
  private stageId = "";
  private fields: BlueprintField[] = [];
  private seeded = 0;
  private profileDir?: string;
  private readonly figures: Figure[] = [];
  private readonly details: string[] = [];
  private readonly errors: string[] = [];
  private readonly notes: string[] = [];
  private readonly pageCost = new Map<number, { first: LoadResult; deep: LoadResult }>();
  /** Per table size: the first page of each items-list filter (CONTRACT "Lists"), by filter label. */
  private readonly filteredCost = new Map<number, Map<string, LoadResult>>();
  private dbDescription = "";
  private readonly idleRss: string[] = [];
  private rateLimitSeen = "";
  /** The console's demo user, printed on the server's first start. */
  private demoUser: { email: string; password: string } | null = null;
  private serverStarts = 0;
  /** Issue 21: the client phase's company and pipeline, when the phase runs. */
  private clientBench?: ClientBench;

  constructor(
    private readonly kind: "pglite" | "postgres",
    private readonly o: BenchOptions,
    private readonly log: (line: string) => void,
  ) {}

  private has(phase: Phase): boolean {
    return this.o.phases.has(phase);
  }

  /** Runs the pass; never throws (failures become `errors` in the report). */
  async run(): Promise<PassReport> {
    try {
      await this.setUp();
      await this.warmServer(`with ${sizeLabel(this.o.sizes[0]!)} items`);
      const small = this.o.sizes[0]!;
      if (this.has("pages")) {
        await this.measurePages(small);
        await this.measureFilteredPages(small);
      }
      if (this.has("list")) await this.measureList();
      if (this.has("get")) await this.measureGet();
      if (this.has("patch")) await this.measurePatch();
      if (this.has("create")) await this.measureCreate();
      if (this.has("delete")) await this.measureDelete();
      if (this.has("upsert")) await this.during("upsert: server vs bare", () => runUpsertPhase(this.upsertHost()));
      if (this.has("notes")) await this.during("notes: create vs bare, one item's notes at two sizes", () => runNotesPhase(this.notesHost()));
      // Issue 30: the console's note renderer, in this process (no server or database work).
      if (this.has("markdown")) await runMarkdownPhase(this.phaseHost());
      if (this.has("tasks")) await this.measureTasks();
      if (this.has("webhooks")) await this.measureWebhooks();
      if (this.has("filters")) await runFiltersPhase(this.phaseHost());
      if (this.has("batch")) await runBatchPhase(this.phaseHost());
      if (this.has("events")) await this.during("events: feed pages at two sizes, follow lag with 4 writers", () => runEventsPhase(this.eventsHost()));
      if (this.has("pages")) {
        for (const size of this.o.sizes.slice(1)) {
          await this.grow(size);
          await this.warmServer(`with ${sizeLabel(size)} items`);
          await this.measurePages(size);
          await this.measureFilteredPages(size);
        }
        this.pageCostFigures();
        this.filteredCostFigures();
      }
      if (this.has("console")) {
        const largest = this.o.sizes[this.o.sizes.length - 1]!;
        if (this.seeded < largest) {
          await this.grow(largest);
          await this.warmServer(`with ${sizeLabel(largest)} items`);
        }
        await this.measureConsole();
      }
      // Issue 21: another company's pipeline read through @stageline/client and raw fetch (child processes).
      if (this.clientBench) await runClientPhase(this.phaseHost(), this.clientBench);
      // Issue 26: tools/call over /v1/ext/mcp against the same REST requests (the demo company's items).
      if (this.has("mcp")) await runMcpPhase(this.phaseHost());
      // Issue 32: the same requests with an OAuth access token and with the API key.
      // Outside the RSS sampler: item 6 (peak RSS) keeps measuring the issue-4 phases only.
      if (this.has("oauth")) await this.during("oauth: access token vs API key", () => runOAuthPhase(this.oauthHost()), false);
      // Issue 17 last: they restart the server with their own environment and leave another company's backlog.
      if (this.has("isolation")) await runIsolationPhase(this.phaseHost());
      if (this.has("backlog")) await runBacklogPhase(this.phaseHost());
      this.rssFigures();
    } catch (err) {
      this.errors.push(err instanceof Error ? err.message : String(err));
      this.log(`  ERROR: ${err instanceof Error ? err.message : String(err)}`);
      this.rssFigures();
    } finally {
      await this.tearDown();
    }
    return {
      db: this.kind,
      dbDescription: this.dbDescription || this.kind,
      asserted: this.kind === "postgres",
      figures: this.figures.sort((a, b) => a.item - b.item),
      details: this.renderDetails(),
      errors: this.errors,
      profiles: this.profiles(),
    };
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Setup, seeding, teardown

  private location(): DbLocation {
    return this.kind === "pglite" ? { kind: "pglite", dataDir: this.dataDir } : { kind: "postgres", url: this.databaseUrl! };
  }

  private async startServer(label: string, env?: Record<string, string>): Promise<void> {
    this.serverStarts++;
    const started = Date.now();
    this.server = await startServerProcess({
      dataDir: this.dataDir,
      ...(this.databaseUrl ? { databaseUrl: this.databaseUrl } : {}),
      rateLimitPerMinute: this.o.rateLimit,
      core: SERVER_CORE,
      label: `${this.kind}-${label}`,
      ...(env ? { env } : {}),
      logFile: path.join(this.tmpDir, "server.log"),
      ...(this.profileDir ? { cpuProfDir: this.profileDir } : {}),
      ...(process.env.BENCH_MEM_PROBE ? { memProbeFile: path.join(this.tmpDir, "memory.jsonl") } : {}),
    });
    if (this.api) this.api.baseUrl = this.server.url;
    if (this.rss) this.rss.setPid(this.server.pid);
    this.log(`    server up (${label}) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }

  /** What the issue-17 phases (lib/isolation.ts) use of this pass. */
  private phaseHost(): PhaseHost {
    return {
      kind: this.kind,
      o: this.o,
      api: this.api,
      dataDir: this.dataDir,
      ...(this.databaseUrl ? { databaseUrl: this.databaseUrl } : {}),
      ...(this.sql ? { sql: this.sql } : {}),
      tmpDir: this.tmpDir,
      itemBody: (tag) => JSON.parse(this.createBody().replace(/\[<id>\]/g, tag)) as unknown,
      restartServer: async (label, env) => {
        await this.baseline?.stop();
        this.baseline = undefined;
        await this.server?.stop();
        await this.startServer(label, env);
      },
      stopServer: async () => {
        await this.server?.stop();
      },
      assertAlive: () => this.server!.assertAlive(),
      // Outside the RSS sampler: item 6 (peak RSS) keeps measuring the issue-4 phases only.
      during: (phase, fn) => this.during(phase, fn, false),
      log: this.log,
      figures: this.figures,
      details: this.details,
      notes: this.notes,
      errors: this.errors,
    };
  }

  private async setUp(): Promise<void> {
    this.tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), `stageline-bench-${this.kind}-`));
    this.dataDir = path.join(this.tmpDir, "server");
    fs.mkdirSync(this.dataDir, { recursive: true });
    if (process.env.BENCH_CPU_PROF) this.profileDir = path.join(REPO_ROOT, "bench/results/profiles", `${this.kind}-${Date.now()}`);
    if (this.kind === "postgres") {
      this.schema = `bench_${Date.now().toString(36)}_${crypto.randomBytes(3).toString("hex")}`;
      const url = new URL(this.o.databaseUrl!);
      url.searchParams.set("schema", this.schema);
      this.databaseUrl = url.toString();
    }
    this.log(`  starting the server (${this.kind}, fresh database)`);
    await this.startServer("first-start");
    const key = this.server!.demoApiKey;
    if (!key) throw new Error("the server printed no `Demo API key:` on its first start (is the demo seed enabled, SEED_DEMO unset?)");
    this.api = new ApiClient(this.server!.url, key);
    this.demoUser = this.server!.demoUser;
    this.rss = new RssSampler(this.server!.pid);

    const pipelines = await this.api.expect<{ id: string; name: string }[]>(200, "GET", "/v1/ext/pipelines");
    this.rateLimitSeen = pipelines.headers.get("ratelimit-limit") ?? pipelines.headers.get("ratelimit")?.toString() ?? "no RateLimit-Limit header";
    const pipeline = pipelines.body.find((p) => p.name === "Sales") ?? pipelines.body[0];
    if (!pipeline) throw new Error("the demo company has no pipeline");
    const stages = await this.api.expect<{ id: string; name: string }[]>(200, "GET", `/v1/ext/pipelines/${pipeline.id}/stages`);
    if (!stages.body[0]) throw new Error(`pipeline ${pipeline.name} has no stages`);
    this.pipelineId = pipeline.id;
    this.stageId = stages.body[0].id;

    // Issue 21: the client phase's company is made now (admin CLI, server up) and seeded below with the demo items.
    if (this.has("client")) this.clientBench = await prepareClientPhase(this.phaseHost());
    if (this.kind === "pglite") await this.server!.stop(); // PGlite is single-process: seed while the server is down
    this.sql = await openSql(this.location());
    const [row] = await this.sql.query<{ company_id: string; blueprint: unknown }>(`SELECT company_id, blueprint FROM pipelines WHERE id = $1`, [pipeline.id]);
    const blueprint = (typeof row!.blueprint === "string" ? JSON.parse(row!.blueprint) : row!.blueprint) as { custom_fields?: BlueprintField[] };
    this.fields = blueprint?.custom_fields ?? [];
    if (!this.fields.length) this.notes.push(`Pipeline "${pipeline.name}" has no custom fields (the issue asks for a company with custom fields).`);
    const [version] = await this.sql.query<{ v: string }>(this.kind === "pglite" ? `SELECT version() AS v` : `SELECT current_setting('server_version') AS v`);
    this.dbDescription =
      this.kind === "pglite"
        ? `embedded PGlite (${String(version?.v ?? "").split(" on ")[0]}), server DATA_DIR in ${os.tmpdir()}`
        : `PostgreSQL ${version?.v ?? "?"}, fresh schema \`${this.schema}\``;
    this.plan = { companyId: row!.company_id, pipelineId: pipeline.id, t0Ms: Math.floor(Date.now() / 1000) * 1000 - 60_000 };
    await this.seedTo(this.o.sizes[0]!);
    if (this.clientBench) this.notes.push(await seedClientPipeline(this.sql, this.clientBench, this.o));

    if (this.kind === "pglite") {
      await this.sql.close();
      this.sql = undefined;
      // The baseline gets its own copy of the freshly seeded database (PGlite cannot be shared between processes).
      const copy = path.join(this.tmpDir, "baseline-pglite");
      fs.cpSync(pgliteDirOf(this.dataDir), copy, { recursive: true });
      await this.startServer("after-seed");
      if (this.has("list") || this.has("create") || this.has("delete") || this.has("upsert") || this.has("notes")) {
        this.baseline = await startBaseline({
          kind: "pglite",
          pgliteDir: copy,
          companyId: this.plan.companyId,
          poolSize: this.o.poolSize,
          core: SERVER_CORE,
          ...(this.profileDir ? { cpuProfDir: this.profileDir } : {}),
        });
      }
    } else if (this.has("list") || this.has("create") || this.has("delete") || this.has("upsert") || this.has("notes")) {
      this.baseline = await startBaseline({
        kind: "postgres",
        databaseUrl: this.databaseUrl!,
        companyId: this.plan.companyId,
        poolSize: this.o.poolSize,
        core: SERVER_CORE,
        ...(this.profileDir ? { cpuProfDir: this.profileDir } : {}),
      });
    }
  }

  /** Seeds items until the company has `size` seeded items (needs `this.sql` open). */
  private async seedTo(size: number): Promise<void> {
    const started = Date.now();
    this.log(`  seeding ${sizeLabel(size)} items (bulk INSERT ... SELECT FROM generate_series)`);
    await seedItems(this.sql!, this.plan, this.seeded + 1, size + 1, (done) => {
      if (size - this.seeded > 100_000) this.log(`    ${done.toLocaleString("en-US")} / ${(size - this.seeded).toLocaleString("en-US")}`);
    });
    await verifySeededOrder(this.sql!, this.plan, Math.floor(size * 0.9));
    this.notes.push(`Seeded ${(size - this.seeded).toLocaleString("en-US")} items in ${((Date.now() - started) / 1000).toFixed(1)} s (bulk SQL, not the API).`);
    this.seeded = size;
  }

  /** Grows the table to `size` seeded items (PGlite: with the server stopped, then restarted). */
  private async grow(size: number): Promise<void> {
    await this.baseline?.stop();
    this.baseline = undefined;
    if (this.kind === "pglite") {
      await this.server!.stop();
      this.sql = await openSql(this.location());
      await this.seedTo(size);
      await this.sql.close();
      this.sql = undefined;
      await this.startServer(`after-seed-${sizeLabel(size)}`);
    } else {
      await this.seedTo(size);
    }
  }

  private async tearDown(): Promise<void> {
    await this.receiver?.stop().catch(() => undefined);
    await this.baseline?.stop().catch(() => undefined);
    await this.server?.stop().catch(() => undefined);
    this.memoryBreakdown();
    await this.sql?.close().catch(() => undefined);
    if (this.kind === "postgres" && this.schema && !this.o.keep) {
      try {
        const admin = await openSql({ kind: "postgres", url: this.o.databaseUrl! });
        await admin.exec(`DROP SCHEMA IF EXISTS "${this.schema}" CASCADE`);
        await admin.close();
      } catch (err) {
        this.notes.push(`Could not drop schema ${this.schema}: ${(err as Error).message}`);
      }
    }
    const log = path.join(this.tmpDir, "server.log");
    if (this.errors.length && fs.existsSync(log)) {
      const kept = path.join(os.tmpdir(), `stageline-bench-${this.kind}-server-${Date.now()}.log`);
      fs.copyFileSync(log, kept);
      this.notes.push(`The server's log of this pass is in ${kept}.`);
    }
    if (this.tmpDir && !this.o.keep) fs.rmSync(this.tmpDir, { recursive: true, force: true });
    else if (this.tmpDir) {
      this.notes.push(`Kept ${this.tmpDir}${this.schema ? ` and schema ${this.schema}` : ""} (--keep); demo API key ${this.api?.apiKey ?? "unknown"}.`);
    }
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Load helpers

  private get headers(): Record<string, string> {
    return { "x-api-key": this.api.apiKey };
  }

  /**
   * A freshly started server is cold (JIT, connection pool, PGlite's caches): before the first figure after a
   * start, it serves first-page list requests for twice the warm-up time. Also records its RSS at rest.
   */
  private async warmServer(moment: string): Promise<void> {
    const rss = readRssMb(this.server!.pid);
    if (rss !== null) this.idleRss.push(`${mb(rss)} ${moment}`);
    if (this.o.warmup <= 0) return;
    await runLoad({ url: this.api.baseUrl, path: "/v1/ext/items?limit=100", headers: this.headers, connections: this.o.connections, duration: this.o.warmup * 2 });
    await this.settle();
  }

  /**
   * Waits until the server has worked off requests still queued from a finished run (autocannon stops reading at
   * the end of a run, but the server still executes what it accepted): one authenticated request that queues
   * behind them. Keeps one run's backlog out of the next run's figures.
   */
  private async settle(): Promise<void> {
    await this.api.call("GET", "/v1/ext/pipelines");
  }

  /**
   * Warms up (unless `warm` is false or the run is a fixed amount), then measures; records failures (with the
   * first failing response) and runs in which no request completed as errors.
   * @param beforeMeasure runs after the warm-up has settled (e.g. re-read item versions).
   */
  private async load(
    label: string,
    options: Omit<LoadOptions, "connections" | "duration">,
    warm = true,
    beforeMeasure?: () => Promise<void>,
  ): Promise<LoadResult> {
    this.server!.assertAlive();
    if (warm && this.o.warmup > 0 && options.amount === undefined) {
      await runLoad({ ...options, connections: this.o.connections, duration: this.o.warmup });
      await this.settle();
    }
    await beforeMeasure?.();
    const result = await runLoad({ ...options, connections: this.o.connections, duration: this.o.duration });
    await this.settle();
    this.server!.assertAlive();
    this.log(`    ${label}: ${rps(result.reqPerSec)}, p50 ${ms(result.p50)}, p99 ${ms(result.p99)}${failures(result) ? `, FAILURES ${failures(result)}` : ""}`);
    if (failures(result)) {
      const sample = result.failureSample ? `; first failure: ${result.failureSample.status} ${result.failureSample.body}` : "";
      const logged = this.server!.recentErrors(1);
      this.errors.push(
        `${label}: ${result.non2xx} non-2xx responses and ${result.errors} connection errors/timeouts (status codes ${JSON.stringify(result.statusCodes)})${sample}${logged.length ? `; the server logged: ${logged[0]}` : ""}`,
      );
    } else if (result.ok === 0) {
      this.errors.push(`${label}: no request completed within the ${options.amount ?? this.o.duration}${options.amount ? " requests" : " s run"}`);
    }
    return result;
  }

  /** Runs one measured phase, logging its duration; with `sampleRss` its RSS counts towards item 6. */
  private async during<T>(phase: string, fn: () => Promise<T>, sampleRss = true): Promise<T> {
    const started = Date.now();
    this.log(`  ${phase}`);
    try {
      return await (sampleRss ? this.rss!.during(phase, fn) : fn());
    } finally {
      this.log(`    (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    }
  }

  private createBody(): string {
    const metadata: Record<string, unknown> = {};
    for (const f of this.fields) metadata[f.key] = sampleValue(f, "[<id>]");
    return JSON.stringify({ name: "Bench lead [<id>]", pipeline_id: this.pipelineId, stage_id: this.stageId, metadata });
  }

  private latencyText(r: LoadResult): string {
    return `p50 ${ms(r.p50)}, p99 ${ms(r.p99)}`;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Measurements

  /** Issue item 4 at one size: the first page and a page 90% deep, through the whole stack. */
  private async measurePages(size: number): Promise<void> {
    const deepAfter = Math.floor(size * 0.9);
    const cursor = keysetCursor(seededItemPosition(this.plan, deepAfter));
    const deepPath = `/v1/ext/items?limit=100&cursor=${cursor}`;
    // Correctness first: the deep page must be the 100 seeded items right after the cursor.
    const check = await this.api.expect<{ item_id: string }[]>(200, "GET", deepPath);
    const expectedFirst = seededItemId(this.plan.companyId, deepAfter + 1);
    if (check.body.length !== 100 || check.body[0]?.item_id !== expectedFirst) {
      throw new Error(`deep page at ${sizeLabel(size)} is wrong: ${check.body.length} items, first ${check.body[0]?.item_id} (expected ${expectedFirst})`);
    }
    await this.during(`page cost at ${sizeLabel(size)} items`, async () => {
      const first = await this.load(`first page, ${sizeLabel(size)} items`, { url: this.api.baseUrl, path: "/v1/ext/items?limit=100", headers: this.headers });
      const deep = await this.load(`deep page (item ${deepAfter.toLocaleString("en-US")}), ${sizeLabel(size)} items`, { url: this.api.baseUrl, path: deepPath, headers: this.headers });
      this.pageCost.set(size, { first, deep });
      this.figures.push(
        { item: 4, metric: `First page at ${sizeLabel(size)} items`, value: first.reqPerSec, display: `${rps(first.reqPerSec)} (${this.latencyText(first)})` },
        { item: 4, metric: `Deep page (90%) at ${sizeLabel(size)} items`, value: deep.reqPerSec, display: `${rps(deep.reqPerSec)} (${this.latencyText(deep)})` },
      );
    });
  }

  /**
   * Issue 11: the first page of each items-list filter at one size, through the whole stack. Every filter matches
   * the same rows at every size, so a page can only cost more if the filter does not keep keyset pagination flat:
   * `stage_id` (a quarter of the seeded items, scanned in list order), `name` and `short_id` (the seeded item 90%
   * deep), `q` ("lead <n>" with n 90% deep: only that item's name contains it, at 10k as at 1M) and `updated_after`
   * (the newest 50 seeded items plus the ones the other phases created).
   */
  private async measureFilteredPages(size: number): Promise<void> {
    const deepAfter = Math.floor(size * 0.9);
    const name = `Seeded lead ${deepAfter}`;
    const byName = await this.api.expect<{ item_id: string; short_id: string }[]>(200, "GET", `/v1/ext/items?name=${encodeURIComponent(name)}`);
    if (byName.body.length !== 1 || byName.body[0]!.item_id !== seededItemId(this.plan.companyId, deepAfter)) {
      throw new Error(`name filter at ${sizeLabel(size)} found ${byName.body.length} items for "${name}" (expected seeded item ${deepAfter})`);
    }
    const updatedAfter = new Date(this.plan.t0Ms - 50_500).toISOString();
    const filters: [string, string][] = [
      ["stage_id", `stage_id=${encodeURIComponent(this.stageId)}`],
      ["name", `name=${encodeURIComponent(name)}`],
      ["short_id", `short_id=${encodeURIComponent(byName.body[0]!.short_id)}`],
      ["q", `q=${encodeURIComponent(`lead ${deepAfter}`)}`],
      ["updated_after", `updated_after=${encodeURIComponent(updatedAfter)}`],
    ];
    const results = new Map<string, LoadResult>();
    await this.during(`filtered pages at ${sizeLabel(size)} items`, async () => {
      for (const [label, query] of filters) {
        const path = `/v1/ext/items?limit=100&${query}`;
        const check = await this.api.expect<unknown[]>(200, "GET", path);
        if (check.body.length === 0) throw new Error(`filter ${label} at ${sizeLabel(size)} matched nothing`);
        const result = await this.load(`filtered page (${label}), ${sizeLabel(size)} items`, { url: this.api.baseUrl, path, headers: this.headers });
        results.set(label, result);
        this.figures.push({ item: 4, metric: `Filtered page (${label}) at ${sizeLabel(size)} items`, value: result.reqPerSec, display: `${rps(result.reqPerSec)} (${this.latencyText(result)})` });
      }
    });
    this.filteredCost.set(size, results);
  }

  /** Issue 11 verdicts: cost of each filtered first page at the largest size relative to the smallest (req/s ratio). */
  private filteredCostFigures(): void {
    const sizes = [...this.filteredCost.keys()].sort((a, b) => a - b);
    if (sizes.length < 2) return;
    const small = this.filteredCost.get(sizes[0]!)!;
    const large = this.filteredCost.get(sizes[sizes.length - 1]!)!;
    const label = `${sizeLabel(sizes[sizes.length - 1]!)} vs ${sizeLabel(sizes[0]!)}`;
    const target = { op: "<=" as const, limit: 1.3, text: "≤ 1.30x" };
    for (const [filter, at] of small) {
      const big = large.get(filter);
      if (!big) continue;
      const cost = at.reqPerSec / big.reqPerSec;
      this.figures.push({ item: 4, metric: `Filtered page cost (${filter}), ${label} (req/s ratio)`, value: cost, display: `${ratio(cost)} (p50 ${ms(at.p50)} → ${ms(big.p50)})`, target });
    }
  }

  /** Issue item 4 verdicts: cost of a page at the largest size relative to the smallest (req/s ratio). */
  private pageCostFigures(): void {
    const sizes = [...this.pageCost.keys()].sort((a, b) => a - b);
    if (sizes.length < 2) return;
    const small = this.pageCost.get(sizes[0]!)!;
    const large = this.pageCost.get(sizes[sizes.length - 1]!)!;
    const label = `${sizeLabel(sizes[sizes.length - 1]!)} vs ${sizeLabel(sizes[0]!)}`;
    const target = { op: "<=" as const, limit: 1.3, text: "≤ 1.30x" };
    const first = small.first.reqPerSec / large.first.reqPerSec;
    const deep = small.deep.reqPerSec / large.deep.reqPerSec;
    this.figures.push(
      { item: 4, metric: `First page cost, ${label} (req/s ratio)`, value: first, display: `${ratio(first)} (p50 ${ms(small.first.p50)} → ${ms(large.first.p50)})`, target },
      { item: 4, metric: `Deep page cost, ${label} (req/s ratio)`, value: deep, display: `${ratio(deep)} (p50 ${ms(small.deep.p50)} → ${ms(large.deep.p50)})`, target },
    );
  }

  /** Issue item 1: GET /v1/ext/items (first page of 100) vs the bare handler, alternating rounds. */
  private async measureList(): Promise<void> {
    const path = "/v1/ext/items?limit=100";
    const server = await this.api.expect<Record<string, unknown>[]>(200, "GET", path);
    const bareRes = await fetch(`${this.baseline!.url}/items?limit=100`);
    const bare = (await bareRes.json()) as Record<string, unknown>[];
    const ids = (rows: Record<string, unknown>[]) => rows.map((r) => r.item_id).join(",");
    if (server.body.length !== 100) throw new Error(`GET ${path} returned ${server.body.length} items, expected 100`);
    if (ids(server.body) !== ids(bare)) throw new Error("the bare handler's first page differs from the server's: the comparison would not be like for like");
    const missing = this.fields.filter((f) => !(f.key in server.body[0]!)).map((f) => f.key);
    if (missing.length) throw new Error(`list items lack the custom fields ${missing.join(", ")}`);
    if (!server.headers.get("link")) this.notes.push("The server's first page carried no Link header although more items remain.");
    const bytes = JSON.stringify(server.body).length;
    await this.during("list: server vs bare", async () => {
      const bareRounds: LoadResult[] = [];
      const serverRounds: LoadResult[] = [];
      const bareOpts = { url: this.baseline!.url, path: "/items?limit=100" };
      const serverOpts = { url: this.api.baseUrl, path, headers: this.headers };
      for (let r = 0; r < this.o.rounds; r++) {
        bareRounds.push(await this.load(`bare list, round ${r + 1}`, bareOpts, r === 0));
        serverRounds.push(await this.load(`server list, round ${r + 1}`, serverOpts, r === 0));
      }
      const b = combineRounds(bareRounds);
      const s = combineRounds(serverRounds);
      this.figures.push(
        { item: 1, metric: "List (first page of 100): server", value: s.reqPerSec, display: `${rps(s.reqPerSec)} (${this.latencyText(s)})` },
        { item: 1, metric: "List: bare Express + SQL, no auth", value: b.reqPerSec, display: `${rps(b.reqPerSec)} (${this.latencyText(b)})` },
        { item: 1, metric: "List: server / bare throughput", value: s.reqPerSec / b.reqPerSec, display: ratio(s.reqPerSec / b.reqPerSec), target: { op: ">=", limit: 0.7, text: "≥ 0.70x" } },
        { item: 1, metric: `List: server p99 at ${this.o.connections} connections`, value: s.p99, display: ms(s.p99), target: { op: "<", limit: 50, text: "< 50 ms" } },
      );
      this.roundsTable("List", bareRounds, serverRounds, `response ≈ ${(bytes / 1024).toFixed(0)} KiB`);
    });
  }

  /**
   * Issue item 2: POST /v1/ext/items (with its outbox event) vs a bare INSERT of the same row; and (issue 12) the same
   * create with a new `Idempotency-Key` per request (the key's lock, lookup and stored response in the same
   * statement) vs without, in alternating rounds.
   */
  private async measureCreate(): Promise<void> {
    const body = this.createBody();
    const probe = await this.api.expect<{ item_id: string }>(201, "POST", "/v1/ext/items", JSON.parse(body.replace(/\[<id>\]/g, "probe")));
    if (!probe.body.item_id) throw new Error("POST /v1/ext/items answered 201 without an item_id");
    await this.during("create: server vs bare", async () => {
      const bareRounds: LoadResult[] = [];
      const serverRounds: LoadResult[] = [];
      const bareOpts = { url: this.baseline!.url, method: "POST" as const, path: "/items", body, uniqueIds: true };
      const serverOpts = { url: this.api.baseUrl, method: "POST" as const, path: "/v1/ext/items", body, uniqueIds: true, headers: this.headers };
      const keyedRounds: LoadResult[] = [];
      const keyedOpts = { ...serverOpts, idempotencyKeys: true };
      for (let r = 0; r < this.o.rounds; r++) {
        bareRounds.push(await this.load(`bare insert, round ${r + 1}`, bareOpts, r === 0));
        serverRounds.push(await this.load(`server create, round ${r + 1}`, serverOpts, r === 0));
        keyedRounds.push(await this.load(`server create with Idempotency-Key, round ${r + 1}`, keyedOpts, r === 0));
      }
      const b = combineRounds(bareRounds);
      const s = combineRounds(serverRounds);
      const k = combineRounds(keyedRounds);
      this.figures.push(
        { item: 2, metric: "Create (with outbox event): server", value: s.reqPerSec, display: `${rps(s.reqPerSec)} (${this.latencyText(s)})` },
        { item: 2, metric: "Create: bare Express + INSERT, no auth", value: b.reqPerSec, display: `${rps(b.reqPerSec)} (${this.latencyText(b)})` },
        { item: 2, metric: "Create: server / bare throughput", value: s.reqPerSec / b.reqPerSec, display: ratio(s.reqPerSec / b.reqPerSec), target: { op: ">=", limit: 0.6, text: "≥ 0.60x" } },
        { item: 2, metric: "Create with a new Idempotency-Key each: server", value: k.reqPerSec, display: `${rps(k.reqPerSec)} (${this.latencyText(k)})` },
        {
          item: 2,
          metric: "Create with key / create without key (throughput)",
          value: k.reqPerSec / s.reqPerSec,
          display: ratio(k.reqPerSec / s.reqPerSec),
          target: { op: ">=", limit: 0.85, text: "≥ 0.85x" },
        },
      );
      this.roundsTable("Create", bareRounds, serverRounds, "no webhook subscriptions yet: each create writes its outbox event, no deliveries", keyedRounds);
    });
  }

  /**
   * Issue 25: DELETE /v1/ext/items/{id} (the item locked, its events erased, item.deleted written, the audit row, the
   * row deleted: one transaction) vs the bare handler doing the same writes, in alternating rounds of a fixed number
   * of deletes each (a delete uses its item up). Every round deletes items made for it just before through the API
   * (each with its item.created event to erase); on PGlite the bare baseline's own copy cannot see those, so it
   * deletes items its own `POST /items` made (no event to erase there). The ratio is printed beside create's.
   */
  private async measureDelete(): Promise<void> {
    const perRound = this.o.quick ? 300 : 2000;
    const spare = this.o.connections * 2; // setupRequest may run ahead of the requests autocannon sends
    const body = this.createBody();
    const makeItems = async (n: number, viaBare: boolean): Promise<string[]> => {
      const ids: string[] = [];
      let next = 0;
      const worker = async () => {
        while (next < n) {
          next++;
          const payload = body.replace(/\[<id>\]/g, `del${crypto.randomBytes(6).toString("hex")}`);
          const res = viaBare
            ? await fetch(`${this.baseline!.url}/items`, { method: "POST", headers: { "content-type": "application/json" }, body: payload })
            : await fetch(`${this.api.baseUrl}/v1/ext/items`, { method: "POST", headers: { ...this.headers, "content-type": "application/json" }, body: payload });
          if (res.status !== 201) throw new Error(`making items to delete: ${res.status} ${(await res.text()).slice(0, 200)}`);
          ids.push(((await res.json()) as { item_id: string }).item_id);
        }
      };
      await Promise.all(Array.from({ length: 8 }, worker));
      await this.settle();
      return ids;
    };
    const deleting = (ids: string[], base: string, prefix: string, headers?: Record<string, string>) => {
      let next = 0;
      return {
        url: base,
        method: "DELETE" as const,
        path: `${prefix}/${ids[0]}`,
        ...(headers ? { headers } : {}),
        amount: perRound,
        setupRequest: (req: Parameters<NonNullable<LoadOptions["setupRequest"]>>[0]) => ({ ...req, path: `${prefix}/${ids[Math.min(next++, ids.length - 1)]}` }),
      };
    };
    await this.during("delete: server vs bare", async () => {
      const bareRounds: LoadResult[] = [];
      const serverRounds: LoadResult[] = [];
      for (let r = 0; r < this.o.rounds; r++) {
        const bareIds = await makeItems(perRound + spare, this.kind === "pglite");
        bareRounds.push(await this.load(`bare delete, round ${r + 1}`, deleting(bareIds, this.baseline!.url, "/items"), false));
        const serverIds = await makeItems(perRound + spare, false);
        serverRounds.push(await this.load(`server delete, round ${r + 1}`, deleting(serverIds, this.api.baseUrl, "/v1/ext/items", this.headers), false));
      }
      const b = combineRounds(bareRounds);
      const s = combineRounds(serverRounds);
      const createRatio = this.figures.find((f) => f.metric === "Create: server / bare throughput")?.value ?? undefined;
      this.figures.push(
        { item: 2, metric: "Delete (erasure, item.deleted event, audit): server", value: s.reqPerSec, display: `${rps(s.reqPerSec)} (${this.latencyText(s)})` },
        { item: 2, metric: "Delete: bare Express + the same writes, no auth", value: b.reqPerSec, display: `${rps(b.reqPerSec)} (${this.latencyText(b)})` },
        {
          item: 2,
          metric: "Delete: server / bare throughput",
          value: s.reqPerSec / b.reqPerSec,
          display: `${ratio(s.reqPerSec / b.reqPerSec)}${createRatio === undefined ? "" : ` (create's in this run: ${ratio(createRatio)})`}`,
          ...(createRatio === undefined ? {} : { target: { op: ">=" as const, limit: createRatio, text: `≥ create's ratio (${ratio(createRatio)})` } }),
        },
      );
      this.roundsTable(
        "Delete",
        bareRounds,
        serverRounds,
        `items made just before${this.kind === "pglite" ? " (bare: by its own POST /items, no event to erase)" : " through the API, each with its item.created event"}; no subscriptions`,
        [],
        `${perRound} deletes each`,
      );
    });
  }

  /** What the issue-25 upsert phase (lib/upsert-phase.ts) uses of this pass. */
  private upsertHost(): UpsertHost {
    return {
      rounds: this.o.rounds,
      serverUrl: this.api.baseUrl,
      baselineUrl: this.baseline!.url,
      headers: this.headers,
      createBody: this.createBody(),
      seeded: this.seeded,
      pipelineId: this.pipelineId,
      stageId: this.stageId,
      load: (label, options, warm) => this.load(label, options, warm),
      latencyText: (r) => this.latencyText(r),
      roundsTable: (name, bare, server, note) => this.roundsTable(name, bare, server, note),
      figures: this.figures,
      probe: async (body, status, result) => {
        const res = await this.api.expect(status, "POST", "/v1/ext/items/upsert", body);
        if (res.headers.get("stageline-upsert") !== result) throw new Error(`the upsert probe answered ${res.headers.get("stageline-upsert")}, expected ${result}`);
      },
    };
  }

  /** What the issue-30 notes phase (lib/notes-phase.ts) uses of this pass. */
  private notesHost(): NotesHost {
    return {
      quick: this.o.quick,
      rounds: this.o.rounds,
      serverUrl: this.api.baseUrl,
      baselineUrl: this.baseline!.url,
      headers: this.headers,
      companyId: this.plan.companyId,
      itemId: seededItemId(this.plan.companyId, 1),
      ...(this.sql ? { sql: this.sql } : {}),
      load: (label, options, warm) => this.load(label, options, warm),
      latencyText: (r) => this.latencyText(r),
      roundsTable: (name, bare, server, note) => this.roundsTable(name, bare, server, note),
      figures: this.figures,
      notes: this.notes,
      log: this.log,
    };
  }

  /** What the issue-32 OAuth phase (lib/oauth-phase.ts) uses of this pass. */
  private oauthHost(): OAuthHost {
    return {
      quick: this.o.quick,
      rounds: this.o.rounds,
      serverUrl: this.api.baseUrl,
      headers: this.headers,
      companyId: this.plan.companyId,
      itemId: seededItemId(this.plan.companyId, 1),
      ...(this.sql ? { sql: this.sql } : {}),
      load: (label, options, warm) => this.load(label, options, warm),
      latencyText: (r) => this.latencyText(r),
      figures: this.figures,
      details: this.details,
      notes: this.notes,
      log: this.log,
    };
  }

  /** What the issue-31 events phase (lib/events-phase.ts) uses of this pass. */
  private eventsHost(): EventsHost {
    return {
      quick: this.o.quick,
      serverUrl: this.api.baseUrl,
      headers: this.headers,
      companyId: this.plan.companyId,
      itemBody: (tag) => JSON.parse(this.createBody().replace(/\[<id>\]/g, tag)) as unknown,
      ...(this.sql ? { sql: this.sql } : {}),
      load: (label, options, warm) => this.load(label, options, warm),
      latencyText: (r) => this.latencyText(r),
      figures: this.figures,
      notes: this.notes,
      log: this.log,
    };
  }

  /** Issue item 3: GET /v1/ext/items/{id} over random seeded items. */
  private async measureGet(): Promise<void> {
    const pool = Math.min(this.seeded, 10_000);
    const ids = Array.from({ length: pool }, (_, i) => seededItemId(this.plan.companyId, i + 1));
    await this.api.expect(200, "GET", `/v1/ext/items/${ids[0]}`);
    await this.during("get one item", async () => {
      const r = await this.load("GET /v1/ext/items/{id}", {
        url: this.api.baseUrl,
        path: `/v1/ext/items/${ids[0]}`,
        headers: this.headers,
        setupRequest: (req) => ({ ...req, path: `/v1/ext/items/${ids[Math.floor(Math.random() * ids.length)]}` }),
      });
      this.figures.push({ item: 3, metric: `GET /v1/ext/items/{id} (random of ${sizeLabel(pool)})`, value: r.reqPerSec, display: `${rps(r.reqPerSec)} (${this.latencyText(r)})` });
    });
  }

  /**
   * Issue item 3: PATCH /v1/ext/items/{id} with `version`. Each connection owns one item and sends the version the
   * previous response returned, so no request conflicts (a 409 would count as a failure).
   */
  private async measurePatch(): Promise<void> {
    const versions = new Map<string, number>();
    // One seeded item per connection, from the middle of the table (away from the first page).
    const start = Math.max(1, Math.floor(this.seeded / 2) - this.o.connections);
    const ids = Array.from({ length: this.o.connections }, (_, i) => seededItemId(this.plan.companyId, start + i));
    // Versions are re-read before the measured run: requests in flight when the warm-up stopped still bumped them.
    const readVersions = async () => {
      for (const id of ids) {
        const res = await this.api.expect<{ version: number }>(200, "GET", `/v1/ext/items/${id}`);
        versions.set(id, res.body.version);
      }
    };
    await readVersions();
    const dealField = this.fields.find((f) => f.type === "number");
    let value = 1;
    const metadata = () => (dealField ? { [dealField.key]: value++ } : {});
    let nextClient = 0;
    const setupClient = (client: autocannon.Client, seen: (status: number, body: string) => void) => {
      const id = ids[nextClient++ % ids.length]!;
      client.setRequests([
        {
          method: "PATCH",
          path: `/v1/ext/items/${id}`,
          headers: { ...this.headers, "content-type": "application/json" },
          setupRequest: (req) => ({ ...req, body: JSON.stringify({ version: versions.get(id), metadata: metadata() }) }),
          onResponse: (status, body) => {
            seen(status, body);
            try {
              const parsed = JSON.parse(body) as { version?: number; current_version?: number };
              const v = status === 200 ? parsed.version : parsed.current_version;
              if (typeof v === "number") versions.set(id, v);
            } catch {
              /* counted as a failure by status */
            }
          },
        },
      ]);
    };
    if (!dealField) this.notes.push("PATCH sends no metadata change (the pipeline has no number field): it measures version-only updates.");
    await this.during("patch with version", async () => {
      const r = await this.load(
        "PATCH /v1/ext/items/{id} with version",
        { url: this.api.baseUrl, method: "PATCH", path: `/v1/ext/items/${ids[0]}`, headers: this.headers, body: "{}", setupClient },
        true,
        readVersions,
      );
      this.figures.push({ item: 3, metric: "PATCH /v1/ext/items/{id} with version", value: r.reqPerSec, display: `${rps(r.reqPerSec)} (${this.latencyText(r)})` });
    });
  }

  /**
   * Issue 12: task create (`POST /v1/ext/tasks` with an `item_id`, its `task.created` event and the reference check)
   * without and with webhook subscriptions to `task.created` (each create then also queues a delivery per
   * subscription, which the dispatcher sends to a local receiver while the load runs), and `PATCH /v1/ext/tasks/{id}`
   * (each connection owns a task and changes its title every request: a real change with its `task.updated`
   * event). Server figures only, no bare baseline and no target; alternating rounds.
   */
  private async measureTasks(): Promise<void> {
    const itemId = seededItemId(this.plan.companyId, 1);
    const body = JSON.stringify({ title: "Bench task [<id>]", due_at: "2030-01-15T10:00:00.000Z", assigned_to: "bench-user", priority: "high", item_id: itemId });
    const probe = await this.api.expect<{ task_id: string; item_id: string }>(201, "POST", "/v1/ext/tasks", JSON.parse(body.replace(/\[<id>\]/g, "probe")));
    if (probe.body.item_id !== itemId) throw new Error(`POST /v1/ext/tasks answered 201 with item_id ${probe.body.item_id} (expected ${itemId})`);
    const ids: string[] = [];
    for (let i = 0; i < this.o.connections; i++) {
      ids.push((await this.api.expect<{ task_id: string }>(201, "POST", "/v1/ext/tasks", JSON.parse(body.replace(/\[<id>\]/g, `patch${i}`)))).body.task_id);
    }
    let title = 0;
    let nextClient = 0;
    const setupClient = (client: autocannon.Client, seen: (status: number, body: string) => void) => {
      const id = ids[nextClient++ % ids.length]!;
      client.setRequests([
        {
          method: "PATCH",
          path: `/v1/ext/tasks/${id}`,
          headers: { ...this.headers, "content-type": "application/json" },
          setupRequest: (req) => ({ ...req, body: JSON.stringify({ title: `Bench task edit ${++title}` }) }),
          onResponse: seen,
        },
      ]);
    };
    const createOpts = { url: this.api.baseUrl, method: "POST" as const, path: "/v1/ext/tasks", body, uniqueIds: true, headers: this.headers };
    const patchOpts = { url: this.api.baseUrl, method: "PATCH" as const, path: `/v1/ext/tasks/${ids[0]}`, headers: this.headers, body: "{}", setupClient };
    const receiver = new WebhookReceiver();
    await receiver.start();
    const subscriptions: string[] = [];
    const subscribers = Math.min(2, this.o.subscriptions);
    try {
      const plain: LoadResult[] = [];
      const fannedOut: LoadResult[] = [];
      const patched: LoadResult[] = [];
      // One RSS phase per kind of request, so the report shows which one drives the server's memory.
      for (let r = 0; r < this.o.rounds; r++) {
        await this.during("tasks: create", async () => plain.push(await this.load(`task create, round ${r + 1}`, createOpts, r === 0)));
        await this.during("tasks: PATCH", async () => patched.push(await this.load(`task PATCH (title), round ${r + 1}`, patchOpts, r === 0)));
        for (let n = 0; n < subscribers; n++) {
          const res = await this.api.expect<{ id: string }>(201, "POST", "/v1/ext/webhooks", { target_url: `${receiver.url}/tasks/${n}`, event: "task.created" });
          subscriptions.push(res.body.id);
        }
        await this.during(`tasks: create, ${subscribers} subscriptions`, async () =>
          fannedOut.push(await this.load(`task create with ${subscribers} task.created subscriptions, round ${r + 1}`, createOpts, r === 0)),
        );
        // Deleting the subscriptions drops their pending deliveries too, so no backlog weighs on the next round.
        while (subscriptions.length) await this.api.expect(204, "DELETE", `/v1/ext/webhooks/${subscriptions.pop()}`);
      }
      const c = combineRounds(plain);
      const f = combineRounds(fannedOut);
      const p = combineRounds(patched);
      this.figures.push(
        { item: 8, metric: "Task create (with item_id and task.created event): server", value: c.reqPerSec, display: `${rps(c.reqPerSec)} (${this.latencyText(c)})` },
        { item: 8, metric: `Task create with ${subscribers} task.created subscriptions: server`, value: f.reqPerSec, display: `${rps(f.reqPerSec)} (${this.latencyText(f)})` },
        { item: 8, metric: "PATCH /v1/ext/tasks/{id} (title change, task.updated event)", value: p.reqPerSec, display: `${rps(p.reqPerSec)} (${this.latencyText(p)})` },
      );
      const row = (what: string, r: LoadResult, i: number) =>
        `| Tasks | ${what} | ${i + 1} | ${Math.round(r.reqPerSec)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.ok} | ${r.non2xx + r.errors} |`;
      this.details.push(
        "",
        `Task rounds (alternating, ${this.o.duration} s each; creates reference one seeded item; with subscriptions, the dispatcher sends to a local receiver meanwhile: ${receiver.deliveries.length} deliveries had arrived when the phase ended):`,
        "",
        "| Measure | Request | Round | req/s | p50 ms | p99 ms | 2xx | failed |",
        "|---|---|---|---|---|---|---|---|",
        ...plain.flatMap((r, i) => [row("create", r, i), row("PATCH", patched[i]!, i), row(`create, ${subscribers} subscriptions`, fannedOut[i]!, i)]),
        "",
      );
    } finally {
      for (const id of subscriptions) await this.api.call("DELETE", `/v1/ext/webhooks/${id}`);
      await receiver.stop();
    }
  }

  /** Issue item 5: delivery latency (one subscription, paced creates) and sustained deliveries/s (a burst, N subscriptions). */
  private async measureWebhooks(): Promise<void> {
    this.receiver = new WebhookReceiver();
    await this.receiver.start();
    const subscriptions: string[] = [];
    const subscribe = async (n: number) => {
      const target = `/hook/${n}`;
      const res = await this.api.call<{ id: string; secret?: string }>("POST", "/v1/ext/webhooks", { target_url: this.receiver!.url + target, event: "item.created" });
      if (res.status !== 201 && res.status !== 200) throw new Error(`POST /v1/ext/webhooks answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
      if (res.body.secret) this.receiver!.setSecret(target, res.body.secret);
      else this.notes.push("The subscribe response carried no `secret`: signatures were not checked.");
      subscriptions.push(res.body.id);
    };
    await subscribe(0);
    const body = this.createBody();
    const sent = new Map<string, number>();
    const paceMs = 50;
    await this.during("webhook delivery latency", async () => {
      for (let n = 0; n < this.o.latencyItems; n++) {
        const start = nowMs();
        const res = await this.api.expect<{ item_id: string }>(201, "POST", "/v1/ext/items", JSON.parse(body.replace(/\[<id>\]/g, `lat${n}`)));
        sent.set(res.body.item_id, nowMs());
        const wait = paceMs - (nowMs() - start);
        if (wait > 0) await sleep(wait);
      }
      const complete = await this.receiver!.waitForTotal(this.o.latencyItems, 30_000);
      if (!complete) this.errors.push(`webhook latency: only ${this.receiver!.deliveries.length} of ${this.o.latencyItems} deliveries arrived within 30 s`);
    });
    const fromResponse: number[] = [];
    const fromCreatedAt: number[] = [];
    for (const d of this.receiver.deliveries) {
      const t = d.itemId ? sent.get(d.itemId) : undefined;
      if (t !== undefined) fromResponse.push(d.receivedAt - t);
      if (d.createdAt) fromCreatedAt.push(d.receivedAt - Date.parse(d.createdAt));
    }
    if (fromResponse.length) {
      const p50 = percentile(fromResponse, 50);
      this.figures.push(
        { item: 5, metric: "Delivery latency p50 (201 response → receipt)", value: p50, display: ms(p50), target: { op: "<", limit: 50, text: "< 50 ms" } },
        { item: 5, metric: "Delivery latency p99 (201 response → receipt)", value: percentile(fromResponse, 99), display: ms(percentile(fromResponse, 99)) },
      );
      this.details.push(
        `Delivery latency over ${fromResponse.length} items created one at a time every ${paceMs} ms with one subscription: from the API's 201 response to receipt p50 ${ms(percentile(fromResponse, 50))}, p99 ${ms(percentile(fromResponse, 99))}, min ${ms(Math.min(...fromResponse))}, max ${ms(Math.max(...fromResponse))}; from the item's created_at (set in the insert, before commit) p50 ${ms(percentile(fromCreatedAt, 50))}, p99 ${ms(percentile(fromCreatedAt, 99))}.`,
      );
    }

    for (let n = 1; n < this.o.subscriptions; n++) await subscribe(n);
    const before = this.receiver.deliveries.length;
    const expected = this.o.burstItems * this.o.subscriptions;
    let stalled = false;
    let burstStart = 0;
    let burstEnd = 0;
    let createRun: LoadResult | undefined;
    await this.during("webhook delivery throughput", async () => {
      burstStart = nowMs();
      createRun = await this.load(`burst of ${this.o.burstItems} creates (${this.o.subscriptions} subscriptions)`, {
        url: this.api.baseUrl,
        method: "POST",
        path: "/v1/ext/items",
        body,
        uniqueIds: true,
        headers: this.headers,
        amount: this.o.burstItems,
      });
      burstEnd = nowMs();
      const deadline = Date.now() + (this.o.quick ? 30_000 : 180_000);
      let lastCount = -1;
      let lastProgress = Date.now();
      while (this.receiver!.deliveries.length < before + expected && Date.now() < deadline) {
        await this.receiver!.waitForTotal(before + expected, 1000);
        const count = this.receiver!.deliveries.length;
        if (count !== lastCount) {
          lastCount = count;
          lastProgress = Date.now();
        } else if (Date.now() - lastProgress > 15_000) {
          stalled = true;
          break;
        }
      }
    });
    const got = this.receiver.deliveries.slice(before);
    const missing = expected - got.length;
    if (got.length) {
      const last = Math.max(...got.map((d) => d.receivedAt));
      const first = Math.min(...got.map((d) => d.receivedAt));
      const overall = got.length / ((last - burstStart) / 1000);
      // After the last create answered, the dispatcher has the process to itself and a backlog to work off: that
      // drain rate is its sustained capacity. If it kept up with the creates there is no backlog to measure.
      const afterBurst = got.filter((d) => d.receivedAt > burstEnd).length;
      const drainS = (last - burstEnd) / 1000;
      const drained = afterBurst >= Math.max(50, got.length * 0.1) && drainS >= 0.5;
      const drain = drained ? afterBurst / drainS : NaN;
      const underLoad = got.filter((d) => d.createdAt).map((d) => d.receivedAt - Date.parse(d.createdAt!));
      const target = { op: ">=" as const, limit: 500, text: "≥ 500 /s" };
      if (drained) {
        this.figures.push(
          { item: 5, metric: `Sustained deliveries/s: backlog drain, dispatcher alone (${this.o.subscriptions} subscriptions)`, value: drain, display: `${Math.round(drain).toLocaleString("en-US")} /s (${afterBurst} deliveries in ${drainS.toFixed(1)} s)`, target },
          { item: 5, metric: "Deliveries/s over the whole burst (creates and deliveries sharing the core)", value: overall, display: `${Math.round(overall).toLocaleString("en-US")} /s` },
        );
      } else {
        this.figures.push({
          item: 5,
          metric: `Sustained deliveries/s over the burst (${this.o.subscriptions} subscriptions; kept up with the creates, so bounded by them)`,
          value: overall,
          display: `${Math.round(overall).toLocaleString("en-US")} /s`,
          target,
        });
      }
      this.details.push(
        `Delivery throughput: ${this.o.burstItems} items created by ${this.o.connections} connections (${createRun ? rps(createRun.reqPerSec) : "?"}, done after ${((burstEnd - burstStart) / 1000).toFixed(1)} s) with ${this.o.subscriptions} item.created subscriptions = ${expected} deliveries; ${got.length} arrived, the first ${((first - burstStart) / 1000).toFixed(2)} s and the last ${((last - burstStart) / 1000).toFixed(1)} s after the burst started; ${afterBurst} of them after the last create answered. Whole-burst rate = deliveries ÷ (last receipt − burst start); drain rate = deliveries after the last create ÷ (last receipt − last create). created_at → receipt during the burst: p50 ${ms(percentile(underLoad, 50))}, p99 ${ms(percentile(underLoad, 99))} (queueing behind the backlog).`,
      );
    }
    if (missing > 0) {
      const text = `${missing} of ${expected} deliveries had not arrived ${stalled ? "and none arrived for 15 s (stalled)" : "by the deadline"}`;
      if (stalled) this.errors.push(`webhook throughput: ${text}`);
      else this.notes.push(`Webhook throughput: ${text}.`);
    }
    this.details.push(
      `Receiver checks: ${this.receiver.duplicates} duplicate deliveries (same webhook-id), ${this.receiver.badSignatures} bad signatures, ${this.receiver.unsigned} unsigned.`,
    );
    if (this.receiver.badSignatures) this.errors.push(`webhooks: ${this.receiver.badSignatures} deliveries had a signature that does not verify`);
    for (const id of subscriptions) await this.api.call("DELETE", `/v1/ext/webhooks/${id}`);
    await this.receiver.stop();
    this.receiver = undefined;
  }

  /**
   * Seeds a console endpoint's delivery log of `count` finished deliveries (PGlite: with the server stopped, then
   * restarted and warmed). @returns the endpoint id.
   */
  private async seedDeliveries(count: number): Promise<string> {
    const started = Date.now();
    this.log(`  seeding a delivery log of ${sizeLabel(count)} deliveries (bulk SQL)`);
    const progress = (done: number) => {
      if (count > 100_000) this.log(`    ${done.toLocaleString("en-US")} / ${count.toLocaleString("en-US")}`);
    };
    let endpointId: string;
    if (this.kind === "pglite") {
      await this.server!.stop();
      this.sql = await openSql(this.location());
      endpointId = await seedDeliveryLog(this.sql, this.plan, count, progress);
      await this.sql.close();
      this.sql = undefined;
      await this.startServer("after-delivery-seed");
      await this.warmServer(`with a delivery log of ${sizeLabel(count)}`);
    } else {
      endpointId = await seedDeliveryLog(this.sql!, this.plan, count, progress);
    }
    this.notes.push(`Seeded a console endpoint's delivery log of ${count.toLocaleString("en-US")} deliveries (with events and attempts) in ${((Date.now() - started) / 1000).toFixed(1)} s (bulk SQL).`);
    return endpointId;
  }

  /**
   * Issue 10: the console's items list and delivery log, signed in as the demo user, at the largest size (one
   * delivery per item in one endpoint's log): first pages, a page 90% deep, and the log filtered by outcome.
   * p95 of full page loads from CONSOLE_CLIENTS concurrent clients; target < 100 ms (PostgreSQL).
   */
  private async measureConsole(): Promise<void> {
    if (!this.demoUser) throw new Error("the server printed no `Demo user:` / `Demo password:` on its first start");
    const size = this.seeded;
    const endpointId = await this.seedDeliveries(size);
    const cookie = await signInConsole(this.api.baseUrl, this.demoUser.email, this.demoUser.password);
    const deepAfter = Math.floor(size * 0.9);
    const rows = (html: string) => (html.match(/<tr>/g) ?? []).length - 1; // minus the header row
    // The endpoint page's delivery log only (its charts' tables, above it, have rows too).
    const logRows = (html: string) => rows(html.slice(html.indexOf('id="deliveries"')));
    const itemsPath = `/console/pipelines/${this.pipelineId}/items`;
    // The newest item of the pipeline as the API lists it: the seeded item 1, or one the create phases added since.
    const [newest] = (await this.api.expect<{ item_id: string }[]>(200, "GET", `/v1/ext/items?pipeline_id=${this.pipelineId}&limit=1`)).body;
    if (!newest) throw new Error("the API lists no item in the benchmark pipeline");
    const logPath = `/console/webhooks/${endpointId}`;
    const pages: { label: string; path: string; check: (html: string) => string | null }[] = [
      {
        label: "items list, first page",
        path: itemsPath,
        check: (h) => (rows(h) === 50 && h.includes(newest.item_id) ? null : `expected the 50 newest items (newest ${newest.item_id}), got ${rows(h)} rows`),
      },
      {
        label: "items list, page 90% deep",
        path: `${itemsPath}?cursor=${keysetCursor(seededItemPosition(this.plan, deepAfter))}`,
        check: (h) => (h.includes(seededItemId(this.plan.companyId, deepAfter + 1)) ? null : `item ${deepAfter + 1} missing from the deep page`),
      },
      {
        label: "delivery log, first page",
        path: logPath,
        check: (h) =>
          logRows(h) === 50 && h.includes("Delivered") && h.includes("<td>3,240</td>") ? null : `expected 50 deliveries and the 24-hour charts, got ${logRows(h)} rows`,
      },
      {
        // Issue 40 item 6: the endpoint page with its 7-day charts (168 hours of outcome counts and latency
        // percentiles, one statement over about 604,800 of the seeded deliveries); the first page above has the
        // 24-hour charts. A seeded full hour holds 3,600 deliveries, 3,240 of them delivered.
        label: "endpoint page with 7-day charts",
        path: `${logPath}?window=7d`,
        check: (h) =>
          h.includes('aria-label="Deliveries per hour, last 7 days: delivered, failed, pending"') && h.includes("<td>3,240</td>") ? null : "expected the 7-day charts with 3,240 deliveries in a full hour",
      },
      {
        label: "delivery log, failed only",
        path: `${logPath}?outcome=failed`,
        check: (h) => (logRows(h) === 50 && !h.includes("status-succeeded") ? null : `expected 50 failed deliveries, got ${logRows(h)} rows`),
      },
      {
        label: "delivery log, page 90% deep",
        path: `${logPath}?cursor=${keysetCursor(seededDeliveryPosition(this.plan, endpointId, deepAfter))}`,
        check: (h) => (logRows(h) === 50 ? null : `expected 50 deliveries, got ${logRows(h)} rows`),
      },
    ];
    const count = this.o.quick ? 50 : 300;
    await this.during(`console pages at ${sizeLabel(size)} items`, async () => {
      for (const page of pages) {
        this.server!.assertAlive();
        const r: PageLatency = await samplePage(this.api.baseUrl + page.path, cookie, { count, warmup: 20, concurrency: CONSOLE_CLIENTS, check: page.check });
        this.log(`    console ${page.label}: p50 ${ms(r.p50)}, p95 ${ms(r.p95)}, p99 ${ms(r.p99)}, ${rps(r.reqPerSec)}${r.failures ? `, FAILURES ${r.failures}` : ""}`);
        if (r.failures) this.errors.push(`console ${page.label}: ${r.failures} failed requests; first: ${r.firstFailure}`);
        this.figures.push({
          item: 7,
          metric: `Console ${page.label} at ${sizeLabel(size)} items (signed in, p95)`,
          value: r.p95,
          display: `${ms(r.p95)} (p50 ${ms(r.p50)}, p99 ${ms(r.p99)}, ${rps(r.reqPerSec)})`,
          target: { op: "<", limit: 100, text: "< 100 ms" },
        });
      }
    });
    this.details.push(
      `Console pages: signed in as the demo user (session cookie), ${count} timed page loads per page after 20 untimed, from ${CONSOLE_CLIENTS} concurrent clients, each timed from request to the end of the HTML; the delivery log belongs to a paused console endpoint with ${size.toLocaleString("en-US")} finished deliveries (every tenth failed).`,
    );
  }

  /** Issue item 6: the server's peak RSS over every measured phase. */
  private rssFigures(): void {
    const peak = this.rss?.peak();
    if (!peak) return;
    this.figures.push({ item: 6, metric: "Server RSS, peak under load", value: peak.peakMb, display: `${mb(peak.peakMb)} (during ${peak.phase})`, target: { op: "<", limit: 200, text: "< 200 MB" } });
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Report details

  /** BENCH_MEM_PROBE=1: what the server's memory was made of at its RSS peak (process.memoryUsage()). */
  private memoryBreakdown(): void {
    const file = path.join(this.tmpDir, "memory.jsonl");
    if (!process.env.BENCH_MEM_PROBE || !fs.existsSync(file)) return;
    type Sample = { rss: number; heapTotal: number; heapUsed: number; external: number; arrayBuffers: number };
    const samples = fs
      .readFileSync(file, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Sample);
    if (!samples.length) return;
    const peak = samples.reduce((a, b) => (b.rss > a.rss ? b : a));
    const m = (n: number) => mb(n / 2 ** 20);
    this.details.push(
      `Memory at the RSS peak (BENCH_MEM_PROBE=1, process.memoryUsage()): rss ${m(peak.rss)} = V8 heap ${m(peak.heapTotal)} (used ${m(peak.heapUsed)}) + external ${m(peak.external)} (of which ArrayBuffers ${m(peak.arrayBuffers)}; WebAssembly memories count here) + other ${m(peak.rss - peak.heapTotal - peak.external)} (code, stacks, allocator). ${samples.length} samples.`,
    );
  }

  private roundsTable(name: string, bare: LoadResult[], server: LoadResult[], note: string, keyed: LoadResult[] = [], each = `${this.o.duration} s each`): void {
    const row = (who: string, r: LoadResult, i: number) =>
      `| ${name} | ${who} | ${i + 1} | ${Math.round(r.reqPerSec)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.ok} | ${r.non2xx + r.errors} |`;
    this.details.push(
      "",
      `${name} rounds (alternating, ${each}; ${note}):`,
      "",
      "| Measure | Handler | Round | req/s | p50 ms | p99 ms | 2xx | failed |",
      "|---|---|---|---|---|---|---|---|",
      ...bare.flatMap((b, i) => [row("bare", b, i), row("server", server[i]!, i), ...(keyed[i] ? [row("server, Idempotency-Key", keyed[i]!, i)] : [])]),
      "",
    );
  }

  private renderDetails(): string[] {
    const lines = [
      `Details (${this.kind}):`,
      "",
      `- Rate limit: on, with its database counter; one API key (the demo key) with RATE_LIMIT_PER_MINUTE=${this.o.rateLimit} (server answered RateLimit-Limit: ${this.rateLimitSeen}).`,
      ...(this.kind === "pglite"
        ? [`- Server started ${this.serverStarts} times: PGlite is single-process, so the server is stopped while the bench seeds its data directory.`]
        : []),
      ...this.notes.map((n) => `- ${n}`),
      ...this.details,
    ];
    if (this.idleRss.length) lines.push("", `Server RSS at rest (before a warm-up): ${this.idleRss.join("; ")}.`);
    if (this.rss?.phases.length) {
      lines.push("", "| Server RSS by phase | peak | mean | samples |", "|---|---|---|---|");
      for (const p of this.rss.phases) lines.push(`| ${p.phase} | ${mb(p.peakMb)} | ${mb(p.meanMb)} | ${p.samples} |`);
    }
    return lines;
  }

  private profiles(): string[] {
    if (!this.profileDir || !fs.existsSync(this.profileDir)) return [];
    const lines: string[] = [];
    for (const file of fs.readdirSync(this.profileDir).filter((f) => f.endsWith(".cpuprofile")).sort()) {
      try {
        lines.push(...renderProfile(summariseProfile(path.join(this.profileDir, file))));
      } catch (err) {
        lines.push(`Could not read profile ${file}: ${(err as Error).message}`);
      }
    }
    if (lines.length) lines.unshift(`Profiles written to ${path.relative(REPO_ROOT, this.profileDir)}/ (BENCH_CPU_PROF=1).`, "");
    return lines;
  }
}

/**
 * Operator health checks and metrics (issue 17): `/healthz` and `/readyz` on the main port (no key, no rate limit,
 * 503 when the database is gone or behind), and the Prometheus listener on its own port: every metric's name, the
 * route-template histogram, the delivery recorder, the queue gauges, and no tenant data (company ids, keys, URLs,
 * item ids) in any label.
 */
import { PROBLEM_CONTENT_TYPE } from "@stageline/shared";
import { loadConfig } from "../src/config/config";
import { readWebhookQueueStats } from "../src/db/webhook-stats";
import { startTestServer, type TestServer } from "./helpers/test-server";
import { createSubscription, emitEvents, startReceiver, waitUntil } from "./helpers/receiver";

/** One sample line of the Prometheus text format. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the sample lines of a Prometheus text exposition (comments skipped). */
function parseSamples(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`unparsable metrics line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = value!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

async function scrape(t: TestServer): Promise<{ text: string; samples: Sample[] }> {
  const res = await fetch(t.server.metricsUrl!);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  return { text, samples: parseSamples(text) };
}

/** The value of the one sample named `name` whose labels include `labels`, or undefined. */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}

const STAGELINE_METRICS = [
  "stageline_http_request_duration_seconds",
  "stageline_webhook_deliveries_pending",
  "stageline_webhook_delivery_lag_seconds",
  "stageline_webhook_attempts_total",
  "stageline_webhook_delivery_latency_seconds",
  "stageline_webhook_endpoints_failing",
  "stageline_webhook_claim_duration_seconds",
  "stageline_webhook_purged_rows_total",
  "stageline_webhook_queue_stats_up",
];

describe("metrics listener", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ metricsPort: 0 });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("listens on 127.0.0.1 by default, apart from the main port", () => {
    expect(t.server.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(new URL(t.server.metricsUrl!).port).not.toBe(String(t.server.port));
  });

  it("serves every Stageline metric with HELP and TYPE, and prom-client's process metrics", async () => {
    const { text } = await scrape(t);
    const types: Record<string, string> = {
      stageline_http_request_duration_seconds: "histogram",
      stageline_webhook_deliveries_pending: "gauge",
      stageline_webhook_delivery_lag_seconds: "gauge",
      stageline_webhook_attempts_total: "counter",
      stageline_webhook_delivery_latency_seconds: "histogram",
      stageline_webhook_endpoints_failing: "gauge",
      stageline_webhook_claim_duration_seconds: "histogram",
      stageline_webhook_purged_rows_total: "counter",
      stageline_webhook_queue_stats_up: "gauge",
    };
    expect(Object.keys(types).sort()).toEqual([...STAGELINE_METRICS].sort());
    for (const [name, type] of Object.entries(types)) {
      expect(text).toContain(`# HELP ${name} `);
      expect(text).toContain(`# TYPE ${name} ${type}\n`);
    }
    for (const name of ["process_cpu_seconds_total", "process_resident_memory_bytes", "nodejs_heap_size_used_bytes", "nodejs_eventloop_lag_seconds", "nodejs_version_info"]) {
      expect(text).toContain(`# TYPE ${name} `);
    }
  });

  it("starts every outcome and purge kind at 0 and the queue gauges at the empty queue", async () => {
    const { samples } = await scrape(t);
    for (const outcome of ["succeeded", "retry", "failed", "gone"]) {
      expect(valueOf(samples, "stageline_webhook_attempts_total", { outcome })).toBe(0);
    }
    for (const kind of ["deliveries", "attempts", "events"]) {
      expect(valueOf(samples, "stageline_webhook_purged_rows_total", { kind })).toBe(0);
    }
    expect(valueOf(samples, "stageline_webhook_deliveries_pending")).toBe(0);
    expect(valueOf(samples, "stageline_webhook_delivery_lag_seconds")).toBe(0);
    expect(valueOf(samples, "stageline_webhook_endpoints_failing")).toBe(0);
    expect(valueOf(samples, "stageline_webhook_queue_stats_up")).toBe(1);
  });

  it("times requests by route template, including requests that end in an error, and 404s as `unmatched`", async () => {
    const created = await t.request("POST", "/v1/ext/items", {
      name: "Metrics deal",
      pipeline_id: t.pipeline.id,
      stage_id: t.pipeline.stages[0]!.id,
      status_id: t.pipeline.stages[0]!.statuses[0]!.id,
    });
    expect(created.status).toBe(201);
    const itemId = created.body.item_id as string;
    expect((await t.request("GET", `/v1/ext/items/${itemId}`)).status).toBe(200);
    expect((await t.request("PATCH", `/v1/ext/items/${itemId}`, { version: "not a number" })).status).toBe(400);
    expect((await t.request("GET", `/v1/ext/items/${itemId}x`)).status).toBe(404);
    expect((await fetch(`${t.url}/no-such-page/${itemId}`)).status).toBe(404);
    expect((await fetch(`${t.url}/V1/EXT/me`, { headers: { "x-api-key": t.apiKey } })).status).toBe(200);

    const { samples } = await scrape(t);
    const count = (labels: Record<string, string>) => valueOf(samples, "stageline_http_request_duration_seconds_count", labels);
    expect(count({ method: "POST", route: "/v1/ext/items", status_class: "2xx" })).toBe(1);
    expect(count({ method: "GET", route: "/v1/ext/items/:item_id", status_class: "2xx" })).toBe(1);
    expect(count({ method: "PATCH", route: "/v1/ext/items/:item_id", status_class: "4xx" })).toBe(1);
    expect(count({ method: "GET", route: "/v1/ext/items/:item_id", status_class: "4xx" })).toBe(1);
    expect(count({ method: "GET", route: "unmatched", status_class: "4xx" })).toBeGreaterThanOrEqual(1);
    expect(count({ method: "GET", route: "/v1/ext/me", status_class: "2xx" })).toBe(1);
  });

  it("puts no company id, key, item id, subscription id or URL in any label or value", async () => {
    const other = await t.newCompany("Tenant Secret Co");
    const item = await t.request("POST", "/v1/ext/items", {
      name: "Tenant item",
      pipeline_id: t.pipeline.id,
      stage_id: t.pipeline.stages[0]!.id,
      status_id: t.pipeline.stages[0]!.statuses[0]!.id,
    });
    const itemId = item.body.item_id as string;
    await t.request("GET", `/v1/ext/items/${itemId}?q=needle-in-query`);
    await t.request("GET", `/v1/ext/items/${itemId}`, undefined, other.apiKey); // another company's item: 404
    await t.request("GET", "/v1/ext/me", undefined, "sl_not-a-real-key-0123456789");
    await fetch(`${t.url}/console/pipelines/${other.pipeline.id}`);
    const target = "https://hooks.tenant-secret.example/zapier/abc123";
    const sub = await createSubscription(t.server.ctx, { companyId: other.companyId, targetUrl: target });

    const { text, samples } = await scrape(t);
    const forbidden = [t.companyId, other.companyId, t.apiKey, other.apiKey, t.keyId, itemId, other.pipeline.id, sub.id, "needle-in-query", "tenant-secret", "sl_not-a-real-key"];
    for (const value of forbidden) expect(text).not.toContain(value);
    // Every label value is from a fixed vocabulary, or a route template made of static segments and `:params`.
    const allowed: Record<string, RegExp> = {
      method: /^(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS|OTHER)$/,
      status_class: /^[1-5]xx$/,
      route: /^(unmatched|other|(\/(:?[a-z_][a-z0-9_.-]*)?)+)$/,
      outcome: /^(succeeded|retry|failed|gone)$/,
      kind: /^(deliveries|attempts|events)$/,
      reason: /^(company_full|buffer_full|database)$/,
      le: /^([0-9.e+-]+|\+Inf)$/,
    };
    for (const s of samples.filter((x) => x.name.startsWith("stageline_"))) {
      for (const [key, value] of Object.entries(s.labels)) {
        expect(allowed[key]).toBeDefined();
        expect(value).toMatch(allowed[key]!);
      }
    }
  });

  it("counts what the delivery engine records on ctx.metrics.delivery, dropping nonsense values", async () => {
    const delivery = t.server.ctx.metrics.delivery;
    delivery.attempt("succeeded");
    delivery.attempt("succeeded");
    delivery.attempt("retry");
    delivery.attempt("gone");
    delivery.delivered(1_500);
    delivery.delivered(Number.NaN);
    delivery.claim(4);
    delivery.purged("events", 3);
    delivery.purged("attempts", -1);
    const { samples } = await scrape(t);
    // No event of this server has a subscription to deliver to, so the attempt values are exactly the calls above.
    expect(valueOf(samples, "stageline_webhook_attempts_total", { outcome: "succeeded" })).toBe(2);
    expect(valueOf(samples, "stageline_webhook_attempts_total", { outcome: "retry" })).toBe(1);
    expect(valueOf(samples, "stageline_webhook_attempts_total", { outcome: "gone" })).toBe(1);
    expect(valueOf(samples, "stageline_webhook_attempts_total", { outcome: "failed" })).toBe(0);
    expect(valueOf(samples, "stageline_webhook_delivery_latency_seconds_count")).toBe(1);
    expect(valueOf(samples, "stageline_webhook_delivery_latency_seconds_sum")).toBe(1.5);
    expect(valueOf(samples, "stageline_webhook_delivery_latency_seconds_bucket", { le: "1" })).toBe(0);
    expect(valueOf(samples, "stageline_webhook_delivery_latency_seconds_bucket", { le: "2.5" })).toBe(1);
    // The running dispatcher's own claims (empty ones too) add to the claim histogram.
    expect(valueOf(samples, "stageline_webhook_claim_duration_seconds_sum")).toBeGreaterThanOrEqual(0.004);
    expect(valueOf(samples, "stageline_webhook_purged_rows_total", { kind: "events" })).toBe(3);
    expect(valueOf(samples, "stageline_webhook_purged_rows_total", { kind: "attempts" })).toBe(0);
  });

  it("answers 404 off /metrics and 405 to other methods", async () => {
    const base = t.server.metricsUrl!.replace(/\/metrics$/, "");
    expect((await fetch(`${base}/`)).status).toBe(404);
    const post = await fetch(t.server.metricsUrl!, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
  });

  it("keeps each server's counts apart (one registry per server)", async () => {
    const second = await startTestServer({ metricsPort: 0 });
    try {
      second.server.ctx.metrics.delivery.attempt("failed");
      const { samples } = await scrape(second);
      expect(valueOf(samples, "stageline_webhook_attempts_total", { outcome: "failed" })).toBe(1);
      expect(valueOf(samples, "stageline_webhook_attempts_total", { outcome: "succeeded" })).toBe(0);
      expect(valueOf((await scrape(t)).samples, "stageline_webhook_attempts_total", { outcome: "failed" })).toBe(0);
    } finally {
      await second.close();
    }
  });
});

describe("the delivery engine's metrics, from real deliveries", () => {
  it("counts each attempt by outcome, the event-to-2xx latency and the claims", async () => {
    const t = await startTestServer({ metricsPort: 0 });
    const rx = await startReceiver({ responder: (req) => (req.index === 0 ? { status: 503 } : { status: 204 }) });
    try {
      await createSubscription(t.server.ctx, { companyId: t.companyId, targetUrl: `${rx.url}/hook` });
      await emitEvents(t.server.ctx, t.companyId, 3);
      await rx.waitFor(() => rx.accepted().length === 3, "three deliveries");
      // The receiver has answered before the dispatcher reads the answer and counts it: wait for the count.
      await waitUntil(async () => valueOf((await scrape(t)).samples, "stageline_webhook_attempts_total", { outcome: "succeeded" }) === 3, "the third success counted");
      const { samples } = await scrape(t);
      expect(valueOf(samples, "stageline_webhook_attempts_total", { outcome: "retry" })).toBe(1);
      expect(valueOf(samples, "stageline_webhook_attempts_total", { outcome: "succeeded" })).toBe(3);
      expect(valueOf(samples, "stageline_webhook_delivery_latency_seconds_count")).toBe(3);
      expect(valueOf(samples, "stageline_webhook_claim_duration_seconds_count")).toBeGreaterThanOrEqual(2);
    } finally {
      await rx.close();
      await t.close();
    }
  });
});

describe("webhook queue gauges", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ metricsPort: 0 });
    await t.server.dispatcher.stop(); // the queue stays as the test writes it
  });
  afterAll(async () => {
    await t?.close();
  });

  /**
   * A subscription of the main company whose queue is in the state given (as the dispatcher leaves it:
   * `dueSecondsAgo` is its `next_due_at`, `failing` sets `failing_since`), with `pending` pending deliveries and
   * `done` succeeded ones.
   */
  async function queue(sub: { disabled?: boolean; paused?: boolean; failing?: boolean; dueSecondsAgo: number | null; pending: number; done?: number }): Promise<void> {
    const prisma = t.server.ctx.prisma;
    const { id } = await createSubscription(t.server.ctx, { companyId: t.companyId, targetUrl: "https://example.com/hook" });
    await prisma.webhookSubscription.update({
      where: { id },
      data: {
        disabledAt: sub.disabled ? new Date() : null,
        pausedAt: sub.paused ? new Date() : null,
        failingSince: sub.failing ? new Date(Date.now() - 3_600_000) : null,
        nextDueAt: sub.dueSecondsAgo === null ? null : new Date(Date.now() - sub.dueSecondsAgo * 1000),
      },
    });
    for (let i = 0; i < sub.pending + (sub.done ?? 0); i++) {
      const event = await prisma.webhookEvent.create({ data: { companyId: t.companyId, type: "item.created", resourceId: "r", payload: {} } });
      await prisma.webhookDelivery.create({
        data: { eventId: event.id, subscriptionId: id, seq: event.seq, state: i < sub.pending ? "pending" : "succeeded" },
      });
    }
  }

  it("reports pending deliveries, the lag of the oldest due queue, and failing endpoints", async () => {
    // Failing, its head's retry due 30 s ago and not yet claimed: lag 30 s. A second delivery waits behind it.
    await queue({ failing: true, dueSecondsAgo: 30, pending: 2 });
    // Failing, its head waits for its retry in 10 minutes: no lag (the delivery behind it cannot go before it).
    await queue({ failing: true, dueSecondsAgo: -600, pending: 2 });
    // Paused: its queue waits for resume, so it is not lag (and it has not failed).
    await queue({ paused: true, dueSecondsAgo: 1_800, pending: 1 });
    // Disabled: neither lag nor failing.
    await queue({ disabled: true, failing: true, dueSecondsAgo: 2_400, pending: 1 });
    // Idle: done deliveries are not pending.
    await queue({ dueSecondsAgo: null, pending: 0, done: 1 });

    const { samples } = await scrape(t);
    expect(valueOf(samples, "stageline_webhook_deliveries_pending")).toBe(6);
    const lag = valueOf(samples, "stageline_webhook_delivery_lag_seconds")!;
    expect(lag).toBeGreaterThanOrEqual(30);
    expect(lag).toBeLessThan(300); // 30 s plus this test's own run time; the other heads are 1,800 s and more
    expect(valueOf(samples, "stageline_webhook_endpoints_failing")).toBe(2);
    expect(valueOf(samples, "stageline_webhook_queue_stats_up")).toBe(1);
  });

  it("counts pending deliveries only up to the cap (that value means this many or more)", async () => {
    const prisma = t.server.ctx.prisma;
    expect((await readWebhookQueueStats(prisma, 4)).pending).toBe(4);
    expect((await readWebhookQueueStats(prisma, 100)).pending).toBe(6);
  });

  it("still answers the scrape when the queue cannot be read, with stats_up 0 and the last values kept", async () => {
    const db = t.server.db;
    await db.executeScript(`ALTER TABLE webhook_deliveries RENAME TO webhook_deliveries_away`);
    try {
      const { samples } = await scrape(t);
      expect(valueOf(samples, "stageline_webhook_queue_stats_up")).toBe(0);
      expect(valueOf(samples, "stageline_webhook_deliveries_pending")).toBe(6);
      expect(valueOf(samples, "stageline_webhook_attempts_total", { outcome: "succeeded" })).toBe(0);
    } finally {
      await db.executeScript(`ALTER TABLE webhook_deliveries_away RENAME TO webhook_deliveries`);
    }
    expect(valueOf((await scrape(t)).samples, "stageline_webhook_queue_stats_up")).toBe(1);
  });
});

describe("health and readiness probes", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.close();
  });

  it("answers /healthz and /readyz without a key, and the metrics listener is off without METRICS_PORT", async () => {
    const health = await fetch(`${t.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });
    const ready = await fetch(`${t.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(ready.headers.get("cache-control")).toBe("no-store");
    expect(await ready.json()).toEqual({ status: "ready", checks: { database: "ok", migrations: "ok" } });
    expect(t.server.metricsUrl).toBeNull();
  });

  it("is not rate limited (more probes than the per-key limit of 60 a minute)", async () => {
    for (let i = 0; i < 70; i++) {
      expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${t.url}/readyz`, { headers: { "x-api-key": t.apiKey } })).status).toBe(200);
    }
  });

  it("is 503 with a problem body while a migration of this build is not applied", async () => {
    const prisma = t.server.ctx.prisma;
    const [last] = await prisma.$queryRawUnsafe<{ id: string; migration_name: string }[]>(
      `SELECT id, migration_name FROM "_prisma_migrations" ORDER BY migration_name DESC LIMIT 1`,
    );
    await prisma.$executeRawUnsafe(`UPDATE "_prisma_migrations" SET rolled_back_at = now() WHERE id = $1`, last!.id);
    try {
      const res = await fetch(`${t.url}/readyz`);
      expect(res.status).toBe(503);
      expect(res.headers.get("content-type")).toContain(PROBLEM_CONTENT_TYPE);
      expect(await res.json()).toEqual({
        type: "about:blank",
        title: "Service Unavailable",
        status: 503,
        detail: "1 migration(s) of this build are not applied to the database.",
        checks: { database: "ok", migrations: "pending" },
        request_id: res.headers.get("request-id"),
      });
    } finally {
      await prisma.$executeRawUnsafe(`UPDATE "_prisma_migrations" SET rolled_back_at = NULL WHERE id = $1`, last!.id);
    }
    expect((await fetch(`${t.url}/readyz`)).status).toBe(200);
  });

  it("is 503 within the time limit, not a hang, while the database does not answer", async () => {
    const prisma = t.server.ctx.prisma;
    // PGlite runs one statement at a time, so an open transaction holds every other query; on PostgreSQL the
    // transaction's exclusive lock holds the migration history.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const tx = prisma.$transaction(
      async (q) => {
        await q.$executeRawUnsafe(`LOCK TABLE "_prisma_migrations" IN ACCESS EXCLUSIVE MODE`);
        locked();
        await held;
      },
      { timeout: 30_000 },
    );
    try {
      await isLocked;
      const res = await fetch(`${t.url}/readyz`);
      expect(res.status).toBe(503);
      const body = (await res.json()) as { checks: unknown };
      expect(body.checks).toEqual(
        t.server.db.kind === "pglite" ? { database: "timeout", migrations: "skipped" } : { database: "ok", migrations: "timeout" },
      );
    } finally {
      release();
      await tx;
    }
    expect((await fetch(`${t.url}/readyz`)).status).toBe(200);
  });

  it("is 503 when the schema is gone, and when the database is closed, while /healthz stays 200", async () => {
    const db = t.server.db;
    await db.executeScript(`DROP SCHEMA "${db.schema}" CASCADE`);
    const dropped = await fetch(`${t.url}/readyz`);
    expect(dropped.status).toBe(503);
    expect(((await dropped.json()) as { checks: unknown }).checks).toEqual({ database: "ok", migrations: "unreadable" });

    await t.server.dispatcher.stop(); // it holds a pooled connection for LISTEN on PostgreSQL, which would keep the pool open
    await db.close();
    const closed = await fetch(`${t.url}/readyz`);
    expect(closed.status).toBe(503);
    expect(await closed.json()).toMatchObject({ status: 503, detail: "The database cannot be reached.", checks: { database: "unreachable", migrations: "skipped" } });
    expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
  });
});

describe("METRICS_PORT and METRICS_HOST", () => {
  it("default to no listener on 127.0.0.1", () => {
    const config = loadConfig({});
    expect(config.metricsPort).toBeUndefined();
    expect(config.metricsHost).toBe("127.0.0.1");
  });

  it("read a port and an address", () => {
    const config = loadConfig({ METRICS_PORT: "9464", METRICS_HOST: "0.0.0.0" });
    expect(config.metricsPort).toBe(9464);
    expect(config.metricsHost).toBe("0.0.0.0");
  });

  it.each(["0", "65536", "abc", "94.64", "-1"])("refuse METRICS_PORT=%s with a message naming the variable", (raw) => {
    expect(() => loadConfig({ METRICS_PORT: raw })).toThrow(/^METRICS_PORT must be a port number from 1 to 65535/);
  });
});

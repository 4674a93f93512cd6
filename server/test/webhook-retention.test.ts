/**
 * Retention of the webhook delivery log (CONTRACT.md "Events and deliveries", Retention; issue 17): ended deliveries
 * older than WEBHOOK_RETENTION_DAYS go with their attempts, then events no delivery references; pending deliveries
 * and their events stay however old; batches; the server's own job; redelivering a purged delivery is 404 in the API
 * and the console; the console says how long the log is kept; WEBHOOK_RETENTION_DAYS validation.
 *
 * Old rows are written with SQL directly, to set their timestamps. The dispatcher is stopped: nothing else changes
 * the log while a test looks at it. Every purge deletes everything old, so each test's counts are its own rows.
 */
import { DEFAULT_WEBHOOK_RETENTION_DAYS, loadConfig } from "../src/config/config";
import { purgeWebhookLog, startWebhookRetention, type PurgeCounts, type PurgedKind } from "../src/webhooks/retention";
import { retentionCutoff, webhookRetentionPolicy, type WebhookRetentionPolicy } from "../src/webhooks/retention-policy";
import { createConsoleUser, signInOverHttp } from "./helpers/console-browser";
import { startTestServer, type TestServer } from "./helpers/test-server";

const DAY = 24 * 60 * 60 * 1000;
const daysAgo = (days: number) => new Date(Date.now() - days * DAY);
const POLICY = webhookRetentionPolicy(30);

let t: TestServer;
let subA: string;
let subB: string;

beforeAll(async () => {
  t = await startTestServer();
  await t.server.dispatcher.stop();
  const subscribe = async () =>
    (await t.request("POST", "/v1/ext/webhooks", { target_url: "http://127.0.0.1:9/hook", event: "task.created" })).body.id as string;
  subA = await subscribe();
  subB = await subscribe();
});
afterAll(async () => {
  await t?.close();
});

const sql = <T>(text: string, params: unknown[] = []) => t.server.db.sql.query<T>(text, params);

/** Inserts an event created `ageDays` ago; returns its id and seq. */
async function insertEvent(ageDays: number): Promise<{ id: string; seq: number }> {
  const [row] = await sql<{ id: string; seq: number }>(
    `INSERT INTO webhook_events (id, company_id, type, resource_id, payload, created_at)
     VALUES (gen_random_uuid()::text, $1, 'task.created', 'task-1', '{"task_id":"task-1"}'::json, $2::timestamptz)
     RETURNING id, seq::int AS seq`,
    [t.companyId, daysAgo(ageDays)],
  );
  return row!;
}

interface DeliverySpec {
  subscriptionId?: string;
  state: "pending" | "succeeded" | "failed";
  /** Days since the delivery ended (`completed_at`); null for none. */
  endedDaysAgo: number | null;
  attempts?: number;
}

/** Inserts a delivery of `event` (created when the event was) with `attempts` attempts; returns its id. */
async function insertDelivery(event: { id: string; seq: number }, spec: DeliverySpec): Promise<string> {
  const [row] = await sql<{ id: string }>(
    `INSERT INTO webhook_deliveries (id, event_id, subscription_id, seq, state, attempt_count, created_at, next_attempt_at, completed_at)
     SELECT gen_random_uuid()::text, e.id, $2, e.seq, $3, $4::int, e.created_at, e.created_at, $5::timestamptz
     FROM webhook_events e WHERE e.id = $1
     RETURNING id`,
    [event.id, spec.subscriptionId ?? subA, spec.state, spec.attempts ?? 1, spec.endedDaysAgo === null ? null : daysAgo(spec.endedDaysAgo)],
  );
  await sql(
    `INSERT INTO webhook_attempts (id, delivery_id, attempted_at, response_status, duration_ms)
     SELECT gen_random_uuid()::text, d.id, d.created_at + n * interval '1 minute', 500, 12
     FROM webhook_deliveries d CROSS JOIN generate_series(1, $2::int) AS n WHERE d.id = $1`,
    [row!.id, spec.attempts ?? 1],
  );
  return row!.id;
}

/** An event `ageDays` old with one delivery; returns both ids. */
async function eventWithDelivery(ageDays: number, spec: DeliverySpec): Promise<{ eventId: string; deliveryId: string }> {
  const event = await insertEvent(ageDays);
  return { eventId: event.id, deliveryId: await insertDelivery(event, spec) };
}

const exists = async (table: "webhook_events" | "webhook_deliveries", id: string) =>
  (await sql<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE id = $1`, [id]))[0]!.n === 1;
const attemptsOf = async (deliveryId: string) =>
  (await sql<{ n: number }>("SELECT count(*)::int AS n FROM webhook_attempts WHERE delivery_id = $1", [deliveryId]))[0]!.n;

/** Runs the purge as the server's job does, recording every `onPurged` report. */
async function purge(policy: WebhookRetentionPolicy = POLICY, now = new Date()) {
  const reports: [PurgedKind, number][] = [];
  const counts = await purgeWebhookLog(t.server.ctx.prisma, policy, now, { onPurged: (kind, n) => reports.push([kind, n]) });
  return { counts, reports };
}

describe("webhook delivery log retention", () => {
  it("deletes succeeded and failed deliveries that ended over 30 days ago, with their attempts and their events", async () => {
    const succeeded = await eventWithDelivery(40, { state: "succeeded", endedDaysAgo: 39, attempts: 1 });
    const failed = await eventWithDelivery(35, { state: "failed", endedDaysAgo: 32, attempts: 4 });
    expect(await attemptsOf(failed.deliveryId)).toBe(4);

    const { counts } = await purge();

    expect(counts).toEqual<PurgeCounts>({ deliveries: 2, attempts: 5, events: 2 });
    for (const row of [succeeded, failed]) {
      expect(await exists("webhook_deliveries", row.deliveryId)).toBe(false);
      expect(await exists("webhook_events", row.eventId)).toBe(false);
      expect(await attemptsOf(row.deliveryId)).toBe(0);
    }
  });

  it("keeps deliveries that ended within 30 days, and their events however old, until they too are 30 days old", async () => {
    const young = await eventWithDelivery(45, { state: "succeeded", endedDaysAgo: 29, attempts: 2 });
    const youngFailed = await eventWithDelivery(3, { state: "failed", endedDaysAgo: 1, attempts: 3 });

    expect((await purge()).counts).toEqual<PurgeCounts>({ deliveries: 0, attempts: 0, events: 0 });
    for (const row of [young, youngFailed]) {
      expect(await exists("webhook_deliveries", row.deliveryId)).toBe(true);
      expect(await exists("webhook_events", row.eventId)).toBe(true);
    }
    expect(await attemptsOf(young.deliveryId)).toBe(2);

    // Two days later the first one ended 31 days ago: it goes, with its attempts and event; the other stays.
    expect((await purge(POLICY, new Date(Date.now() + 2 * DAY))).counts).toEqual<PurgeCounts>({ deliveries: 1, attempts: 2, events: 1 });
    expect(await exists("webhook_deliveries", young.deliveryId)).toBe(false);
    expect(await exists("webhook_events", young.eventId)).toBe(false);
    expect(await exists("webhook_deliveries", youngFailed.deliveryId)).toBe(true);
    expect(await exists("webhook_events", youngFailed.eventId)).toBe(true);
  });

  it("never deletes a pending delivery, however old, nor its attempts or its event", async () => {
    const queued = await eventWithDelivery(400, { state: "pending", endedDaysAgo: null, attempts: 0 });
    const retrying = await eventWithDelivery(90, { state: "pending", endedDaysAgo: null, attempts: 7 });
    // Inconsistent on purpose (a pending delivery never has completed_at): the state alone keeps it.
    const odd = await eventWithDelivery(90, { state: "pending", endedDaysAgo: 80, attempts: 1 });

    expect((await purge()).counts).toEqual<PurgeCounts>({ deliveries: 0, attempts: 0, events: 0 });
    // Even with a retention of one day, a year later.
    await purge(webhookRetentionPolicy(1), new Date(Date.now() + 365 * DAY));

    for (const row of [queued, retrying, odd]) {
      expect(await exists("webhook_deliveries", row.deliveryId)).toBe(true);
      expect(await exists("webhook_events", row.eventId)).toBe(true);
    }
    expect(await attemptsOf(retrying.deliveryId)).toBe(7);
  });

  it("keeps an event while one of its deliveries is pending, and deletes it once that one has ended long enough", async () => {
    const event = await insertEvent(60);
    const ended = await insertDelivery(event, { subscriptionId: subA, state: "failed", endedDaysAgo: 50, attempts: 2 });
    const pending = await insertDelivery(event, { subscriptionId: subB, state: "pending", endedDaysAgo: null, attempts: 3 });

    expect((await purge()).counts).toEqual<PurgeCounts>({ deliveries: 1, attempts: 2, events: 0 });
    expect(await exists("webhook_deliveries", ended)).toBe(false);
    expect(await exists("webhook_deliveries", pending)).toBe(true);
    expect(await exists("webhook_events", event.id)).toBe(true);

    // The pending one succeeds; it ended 31 days ago as far as the next purge is concerned.
    await sql("UPDATE webhook_deliveries SET state = 'succeeded', completed_at = $2::timestamptz WHERE id = $1", [pending, daysAgo(31)]);
    expect((await purge()).counts).toEqual<PurgeCounts>({ deliveries: 1, attempts: 3, events: 1 });
    expect(await exists("webhook_events", event.id)).toBe(false);
  });

  it("deletes old events that never had a delivery, and keeps young ones", async () => {
    const old = await insertEvent(31);
    const young = await insertEvent(29);
    expect((await purge()).counts).toEqual<PurgeCounts>({ deliveries: 0, attempts: 0, events: 1 });
    expect(await exists("webhook_events", old.id)).toBe(false);
    expect(await exists("webhook_events", young.id)).toBe(true);
  });

  it("keeps a delivery that a redeliver put back in the queue before the purge", async () => {
    const row = await eventWithDelivery(50, { state: "failed", endedDaysAgo: 45, attempts: 2 });
    const res = await t.request("POST", `/v1/ext/webhooks/${subA}/deliveries/${row.deliveryId}/redeliver`);
    expect(res.status).toBe(202);
    expect(res.body.state).toBe("pending");

    expect((await purge()).counts).toEqual<PurgeCounts>({ deliveries: 0, attempts: 0, events: 0 });
    expect(await exists("webhook_deliveries", row.deliveryId)).toBe(true);
    expect(await attemptsOf(row.deliveryId)).toBe(2);
  });

  it("deletes more rows than one batch holds, batch by batch, walking past old events that must stay", async () => {
    const small: WebhookRetentionPolicy = { ...POLICY, batchSize: 100 };
    // 150 old events still referenced by pending deliveries, created before 30 deletable events with no delivery:
    // the walk must pass them (one batch examines 100 events at most) to reach the deletable ones.
    const held: string[] = [];
    for (let i = 0; i < 150; i++) held.push((await eventWithDelivery(70, { state: "pending", endedDaysAgo: null, attempts: 0 })).eventId);
    await sql(
      `INSERT INTO webhook_events (id, company_id, type, resource_id, payload, created_at)
       SELECT gen_random_uuid()::text, $1, 'task.created', 'bulk', '{}'::json, $2::timestamptz FROM generate_series(1, 30)`,
      [t.companyId, daysAgo(65)],
    );
    // 250 ended deliveries (2 attempts each) of 250 old events.
    await sql(
      `WITH events AS (
         INSERT INTO webhook_events (id, company_id, type, resource_id, payload, created_at)
         SELECT gen_random_uuid()::text, $1, 'task.created', 'bulk', '{}'::json, $3::timestamptz - n * interval '1 second'
         FROM generate_series(1, 250) AS n
         RETURNING id, seq, created_at
       ), deliveries AS (
         INSERT INTO webhook_deliveries (id, event_id, subscription_id, seq, state, attempt_count, created_at, completed_at)
         SELECT gen_random_uuid()::text, id, $2, seq, CASE WHEN seq % 2 = 0 THEN 'succeeded' ELSE 'failed' END, 2, created_at, created_at
         FROM events
         RETURNING id, created_at
       )
       INSERT INTO webhook_attempts (id, delivery_id, attempted_at, duration_ms)
       SELECT gen_random_uuid()::text, id, created_at, 5 FROM deliveries CROSS JOIN generate_series(1, 2)`,
      [t.companyId, subB, daysAgo(40)],
    );

    const { counts, reports } = await purge(small);

    expect(counts).toEqual<PurgeCounts>({ deliveries: 250, attempts: 500, events: 280 });
    // Deliveries in batches of at most 100; every report is a positive count.
    expect(reports.filter(([kind]) => kind === "deliveries").map(([, n]) => n)).toEqual([100, 100, 50]);
    expect(reports.filter(([kind]) => kind === "attempts").map(([, n]) => n)).toEqual([200, 200, 100]);
    expect(reports.every(([, n]) => n > 0)).toBe(true);
    const eventBatches = reports.filter(([kind]) => kind === "events").map(([, n]) => n);
    expect(eventBatches.length).toBeGreaterThanOrEqual(3);
    expect(Math.max(...eventBatches)).toBeLessThanOrEqual(100);
    const left = await sql<{ n: number }>("SELECT count(*)::int AS n FROM webhook_events WHERE resource_id = 'bulk'");
    expect(left[0]!.n).toBe(0);
    const kept = await sql<{ n: number }>("SELECT count(*)::int AS n FROM webhook_events WHERE id = ANY($1::text[])", [held]);
    expect(kept[0]!.n).toBe(150);
  });

  it("lets two purges run at once (two server processes) without deleting anything twice or failing", async () => {
    await sql(
      `WITH events AS (
         INSERT INTO webhook_events (id, company_id, type, resource_id, payload, created_at)
         SELECT gen_random_uuid()::text, $1, 'task.created', 'twice', '{}'::json, $3::timestamptz FROM generate_series(1, 300)
         RETURNING id, seq, created_at
       )
       INSERT INTO webhook_deliveries (id, event_id, subscription_id, seq, state, created_at, completed_at)
       SELECT gen_random_uuid()::text, id, $2, seq, 'succeeded', created_at, created_at FROM events`,
      [t.companyId, subA, daysAgo(33)],
    );
    const small: WebhookRetentionPolicy = { ...POLICY, batchSize: 50 };
    const [one, two] = await Promise.all([purge(small), purge(small)]);
    // An event whose deliveries the other process was still deleting may be left to the next run.
    const next = await purge(small);
    expect(one.counts.deliveries + two.counts.deliveries).toBe(300);
    expect(next.counts.deliveries).toBe(0);
    expect(one.counts.events + two.counts.events + next.counts.events).toBe(300);
    const left = await sql<{ n: number }>("SELECT count(*)::int AS n FROM webhook_events WHERE resource_id = 'twice'");
    expect(left[0]!.n).toBe(0);
  });
});

describe("the retention job", () => {
  it("runs in the server: runNow deletes old rows and keeps pending ones", async () => {
    const old = await eventWithDelivery(44, { state: "succeeded", endedDaysAgo: 44, attempts: 3 });
    const pending = await eventWithDelivery(44, { state: "pending", endedDaysAgo: null, attempts: 1 });

    const counts = await t.server.webhookRetention.runNow();

    expect(counts).toEqual<PurgeCounts>({ deliveries: 1, attempts: 3, events: 1 });
    expect(await exists("webhook_deliveries", old.deliveryId)).toBe(false);
    expect(await exists("webhook_events", old.eventId)).toBe(false);
    expect(await exists("webhook_deliveries", pending.deliveryId)).toBe(true);
    expect(await exists("webhook_events", pending.eventId)).toBe(true);
  });

  it("reports each batch to onPurged and each run's totals to onSummary, and runs at start", async () => {
    const row = await eventWithDelivery(36, { state: "failed", endedDaysAgo: 35, attempts: 2 });
    const reports: [PurgedKind, number][] = [];
    const summaries: { counts: PurgeCounts; cutoff: Date }[] = [];
    const errors: unknown[] = [];
    const started = Date.now();
    const job = startWebhookRetention(t.server.ctx.prisma, POLICY, {
      onPurged: (kind, n) => reports.push([kind, n]),
      onSummary: (counts, cutoff) => summaries.push({ counts, cutoff }),
      onError: (err) => errors.push(err),
    });
    // The run started with the job; runNow queues behind it and finds nothing more.
    expect(await job.runNow()).toEqual<PurgeCounts>({ deliveries: 0, attempts: 0, events: 0 });
    await job.stop();

    expect(errors).toEqual([]);
    expect(reports).toEqual([
      ["deliveries", 1],
      ["attempts", 2],
      ["events", 1],
    ]);
    expect(summaries).toHaveLength(1);
    expect(summaries[0]!.counts).toEqual<PurgeCounts>({ deliveries: 1, attempts: 2, events: 1 });
    expect(summaries[0]!.cutoff.getTime()).toBeGreaterThanOrEqual(started - 30 * DAY);
    expect(summaries[0]!.cutoff.getTime()).toBeLessThanOrEqual(Date.now() - 30 * DAY);
    expect(await exists("webhook_deliveries", row.deliveryId)).toBe(false);
  });

  it("reports a failed run to onError and keeps going", async () => {
    const errors: unknown[] = [];
    const broken = { ...t.server.ctx.prisma } as typeof t.server.ctx.prisma; // not opened by openDatabase: no SQL runner
    const job = startWebhookRetention(broken, POLICY, { onError: (err) => errors.push(err) });
    expect(await job.runNow()).toEqual<PurgeCounts>({ deliveries: 0, attempts: 0, events: 0 });
    await job.stop();
    expect(errors.length).toBe(2);
  });
});

describe("redelivering a purged delivery", () => {
  it("is 404 in the API", async () => {
    const row = await eventWithDelivery(40, { state: "succeeded", endedDaysAgo: 40, attempts: 1 });
    const listed = await t.request("GET", `/v1/ext/webhooks/${subA}/deliveries?limit=100`);
    expect(listed.body.map((d: { id: string }) => d.id)).toContain(row.deliveryId);

    await purge();

    const res = await t.request("POST", `/v1/ext/webhooks/${subA}/deliveries/${row.deliveryId}/redeliver`);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("not_found");
    expect(await exists("webhook_deliveries", row.deliveryId)).toBe(false);
  });

  it("is 404 in the console, whose delivery log says how long deliveries are kept", async () => {
    const admin = await createConsoleUser(t, "admin");
    const signedIn = await signInOverHttp(t.url, admin.email, admin.password);
    expect(signedIn.status).toBe(303);
    const row = await eventWithDelivery(40, { state: "failed", endedDaysAgo: 40, attempts: 1 });
    const page = (path: string, cookie: string) => fetch(`${t.url}${path}`, { headers: { cookie } });

    const log = await page(`/console/webhooks/${subA}`, signedIn.cookie!);
    expect(log.status).toBe(200);
    const html = await log.text();
    expect(html).toContain(`Deliveries are kept for ${DEFAULT_WEBHOOK_RETENTION_DAYS} days after they are delivered or fail`);

    // The delivery's page, with its Resend form, before the purge.
    const detail = await page(`/console/webhooks/${subA}/deliveries/${row.deliveryId}`, signedIn.cookie!);
    expect(detail.status).toBe(200);
    const csrfCookies = detail.headers.getSetCookie().map((c) => c.split(";")[0]!);
    const token = /name="_csrf" value="([^"]+)"/.exec(await detail.text())?.[1];
    expect(token).toBeDefined();

    await purge();

    const cookie = [signedIn.cookie!, ...csrfCookies].join("; ");
    const resend = await fetch(`${t.url}/console/webhooks/${subA}/deliveries/${row.deliveryId}/resend`, {
      method: "POST",
      headers: { cookie, origin: t.url, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: token! }),
      redirect: "manual",
    });
    expect(resend.status).toBe(404);
    expect(await resend.text()).toContain(`Webhook delivery ${row.deliveryId} was not found.`);
    expect((await page(`/console/webhooks/${subA}/deliveries/${row.deliveryId}`, signedIn.cookie!)).status).toBe(404);
  });
});

describe("WEBHOOK_RETENTION_DAYS", () => {
  it("defaults to 30 days and accepts a positive whole number of days", () => {
    expect(loadConfig({}).webhookRetentionDays).toBe(30);
    expect(loadConfig({ WEBHOOK_RETENTION_DAYS: "" }).webhookRetentionDays).toBe(30);
    expect(loadConfig({ WEBHOOK_RETENTION_DAYS: "7" }).webhookRetentionDays).toBe(7);
    expect(loadConfig({ WEBHOOK_RETENTION_DAYS: "3650" }).webhookRetentionDays).toBe(3650);
  });

  it.each(["0", "-1", "1.5", "thirty", "3651"])("refuses %p, naming the variable", (value) => {
    expect(() => loadConfig({ WEBHOOK_RETENTION_DAYS: value })).toThrow(/^WEBHOOK_RETENTION_DAYS must be /);
  });

  it("sets the cutoff that many whole days before now", () => {
    const now = new Date("2026-11-24T12:00:00.000Z");
    expect(retentionCutoff(now, { retentionDays: 30 }).toISOString()).toBe("2026-10-25T12:00:00.000Z");
    expect(webhookRetentionPolicy(30)).toEqual({ retentionDays: 30, batchSize: 500, intervalMs: 600_000 });
  });
});

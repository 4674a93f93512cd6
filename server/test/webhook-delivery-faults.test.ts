/**
 * Webhook deliveries under faults (CONTRACT.md "Events and deliveries": at least once, in event order per
 * subscription, a crash loses nothing): targets that are down, connections dropped before the response, a retry
 * window that runs out, two dispatchers on one database, a crashed process's leases, and a graceful stop.
 * Real servers and a real receiver; fast retries (20 ms base, 200 ms cap) and a 100 ms fallback poll.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startServer } from "../src/server";
import { adoptWakeups, claimDueDeliveries } from "../src/db/webhook-dispatch";
import { WebhookDispatcher } from "../src/webhooks/dispatcher";
import { startTestServer, testConfig, type TestServer } from "./helpers/test-server";
import { createSubscription, emitEvents, emitEventsTogether, startReceiver, waitUntil, type Receiver, type ReceivedRequest } from "./helpers/receiver";

process.env.WEBHOOK_RETRY_BASE_MS = "20";
process.env.WEBHOOK_RETRY_MAX_MS = "200";
process.env.WEBHOOK_POLL_MS = "100";

/** The webhook-ids of `requests`, in arrival order. */
const ids = (requests: ReceivedRequest[]) => requests.map((r) => r.headers["webhook-id"]);

/** Asserts that `requests` never go back in event order: a retry repeats an id, the next id only follows it. */
function expectInEventOrder(requests: ReceivedRequest[], eventIds: string[]) {
  const positions = ids(requests).map((id) => eventIds.indexOf(id));
  expect(positions.every((p) => p >= 0)).toBe(true);
  expect(positions).toEqual([...positions].sort((a, b) => a - b));
}

describe("webhook delivery through target outages", () => {
  let t: TestServer;
  let rx: Receiver;
  beforeAll(async () => {
    t = await startTestServer();
    rx = await startReceiver();
  });
  afterAll(async () => {
    await t?.close();
    await rx?.close();
  });

  it("a target that is down (connection refused) and comes back receives every event, in order, once each", async () => {
    const down = await startReceiver();
    const port = down.port;
    await down.close(); // nothing listens on the port now
    await createSubscription(t.server.ctx, { companyId: t.companyId, targetUrl: `http://127.0.0.1:${port}/hook` });
    const events = await emitEvents(t.server.ctx, t.companyId, 5);
    await waitUntil(async () => (await t.server.ctx.prisma.webhookAttempt.count({ where: { error: { startsWith: "connection refused" } } })) >= 3, "refused attempts");

    const back = await startReceiver({ port });
    try {
      await back.waitFor(() => back.accepted().length === 5, "all five events");
      expect(ids(back.accepted())).toEqual(events.map((e) => e.id));
      expect(back.requests).toHaveLength(5);
    } finally {
      await back.close();
    }
  });

  it("a target answering 503 for a while receives every event in order, each accepted exactly once", async () => {
    await createSubscription(t.server.ctx, { companyId: t.companyId, targetUrl: `${rx.url}/flaky` });
    rx.respondWith((r) => (r.path === "/flaky" && rx.requests.filter((q) => q.path === "/flaky").length <= 6 ? { status: 503 } : undefined));
    const events = await emitEvents(t.server.ctx, t.companyId, 8);
    await rx.waitFor(() => rx.accepted("/flaky").length === 8, "all eight events");
    rx.respondWith(() => undefined);

    const flaky = rx.requests.filter((r) => r.path === "/flaky");
    expect(ids(rx.accepted("/flaky"))).toEqual(events.map((e) => e.id));
    expect(flaky.filter((r) => r.answered === 503)).toHaveLength(6);
    expectInEventOrder(flaky, events.map((e) => e.id));
  });

  it("a connection dropped before the response is retried: the event arrives again under the same webhook-id", async () => {
    const sub = await createSubscription(t.server.ctx, { companyId: t.companyId, targetUrl: `${rx.url}/dropping` });
    rx.respondWith((r) => (r.path === "/dropping" && rx.requests.filter((q) => q.path === "/dropping").length === 1 ? { destroy: true } : undefined));
    const [event] = await emitEvents(t.server.ctx, t.companyId, 1);
    await rx.waitFor(() => rx.accepted("/dropping").length === 1, "the redelivery");
    rx.respondWith(() => undefined);

    const dropping = rx.requests.filter((r) => r.path === "/dropping");
    expect(ids(dropping)).toEqual([event.id, event.id]);
    expect(dropping[0].answered).toBeNull();
    expect(dropping[1].body.equals(dropping[0].body)).toBe(true);
    const attempt = await t.server.ctx.prisma.webhookAttempt.findFirstOrThrow({ where: { delivery: { eventId: event.id, subscriptionId: sub.id } }, orderBy: { attemptedAt: "asc" } });
    expect(attempt.error).toMatch(/closed before a response/);
  });
});

describe("webhook delivery when the retry window runs out", () => {
  let t: TestServer;
  let rx: Receiver;
  beforeAll(async () => {
    process.env.WEBHOOK_RETRY_WINDOW_MS = "1500";
    try {
      t = await startTestServer();
    } finally {
      delete process.env.WEBHOOK_RETRY_WINDOW_MS;
    }
    rx = await startReceiver({ responder: () => ({ status: 500, body: "still broken" }) });
  });
  afterAll(async () => {
    await t?.close();
    await rx?.close();
  });

  it("fails the delivery after a last attempt at the window's end, and disables the subscription that kept failing", async () => {
    const prisma = t.server.ctx.prisma;
    const sub = await createSubscription(t.server.ctx, { companyId: t.companyId, targetUrl: `${rx.url}/broken` });
    // One transaction: the three deliveries are queued before the first attempt, however slow the machine (with three
    // separate inserts, a 1.5 s window could run out before the second existed, which then got an attempt of its own).
    const [first] = await emitEventsTogether(t.server.ctx, t.companyId, 3);
    await waitUntil(async () => (await prisma.webhookSubscription.findUniqueOrThrow({ where: { id: sub.id } })).disabledAt !== null, "the subscription to be disabled");

    const subscription = await prisma.webhookSubscription.findUniqueOrThrow({ where: { id: sub.id } });
    expect(subscription.disabledReason).toMatch(/^every delivery attempt failed for 1.5 s; last: HTTP 500/);
    const deliveries = await prisma.webhookDelivery.findMany({ where: { subscriptionId: sub.id }, orderBy: { seq: "asc" }, include: { attempts: { orderBy: { attemptedAt: "asc" } } } });
    expect(deliveries.map((d) => d.state)).toEqual(["failed", "failed", "failed"]);
    const [exhausted, ...skipped] = deliveries;
    expect(exhausted.eventId).toBe(first.id);
    expect(exhausted.attempts.length).toBeGreaterThan(2);
    const last = exhausted.attempts[exhausted.attempts.length - 1];
    expect(last.attemptedAt.getTime()).toBeGreaterThanOrEqual(exhausted.createdAt.getTime() + 1500);
    expect(last.nextAttemptAt).toBeNull();
    for (const d of skipped) {
      expect(d.attemptCount).toBe(0);
      expect(d.lastError).toMatch(/^subscription disabled: every delivery attempt failed/);
    }
    // Later events are not queued for a disabled subscription, so nothing more reaches the target.
    await emitEvents(t.server.ctx, t.companyId, 1);
    expect(await prisma.webhookDelivery.count({ where: { subscriptionId: sub.id } })).toBe(3);
  });
});

/**
 * The two tests that start a second server (a second dispatcher, a restart) wait up to 30 s for their deliveries
 * inside the test, so jest's 30 s default could end them before their own deadline: on a fresh machine a whole
 * `npm test` (3 workers, 2 cores) ran each past 30 s (issue 33). Alone they take a few seconds.
 */
const SEVERAL_SERVERS_TIMEOUT_MS = 120_000;

describe("webhook delivery with several dispatchers", () => {
  it("two dispatchers on one database never send the same delivery twice", async () => {
    const t = await startTestServer();
    const rx = await startReceiver({ responder: () => ({ delayMs: 5 }) });
    // On PostgreSQL: a second server process's worth of dispatcher (its own server on the same schema, woken by
    // NOTIFY). On the embedded PGlite, which one process owns: a second dispatcher on the same database.
    const second = t.server.ctx.config.databaseUrl
      ? await startServer(testConfig({ databaseUrl: t.server.ctx.config.databaseUrl }))
      : null;
    const extra = second ? null : new WebhookDispatcher(t.server.ctx);
    extra?.start();
    try {
      const subs = [];
      for (let i = 0; i < 8; i++) subs.push(await createSubscription(t.server.ctx, { companyId: t.companyId, targetUrl: `${rx.url}/s${i}` }));
      const events = await emitEvents(t.server.ctx, t.companyId, 20);
      await rx.waitFor(() => rx.accepted().length === 160, "160 deliveries", 30_000);

      expect(rx.requests).toHaveLength(160);
      for (let i = 0; i < 8; i++) expect(ids(rx.accepted(`/s${i}`))).toEqual(events.map((e) => e.id));
      const prisma = t.server.ctx.prisma;
      await waitUntil(async () => (await prisma.webhookDelivery.count({ where: { state: "succeeded" } })) === 160, "every delivery recorded");
      const attempts = await prisma.webhookDelivery.groupBy({ by: ["attemptCount"], _count: true });
      expect(attempts).toEqual([{ attemptCount: 1, _count: 160 }]);
    } finally {
      await extra?.stop();
      await second?.close();
      await t.close();
      await rx.close();
    }
  }, SEVERAL_SERVERS_TIMEOUT_MS);

  it("deliveries claimed by a crashed process are sent once its leases expire, and not before", async () => {
    const t = await startTestServer();
    const rx = await startReceiver();
    const prisma = t.server.ctx.prisma;
    try {
      // No dispatcher runs while the events are written; then a process claims them and dies without a word.
      await t.server.dispatcher.stop();
      for (let i = 0; i < 4; i++) await createSubscription(t.server.ctx, { companyId: t.companyId, targetUrl: `${rx.url}/c${i}` });
      const events = await emitEvents(t.server.ctx, t.companyId, 2);
      await adoptWakeups(prisma, 1_000);
      const claimed = await claimDueDeliveries(prisma, { ownerId: "crashed-host:4242:dead", lanes: { healthy: 100, probation: 100 }, leaseMs: 1_500, batchSize: 8 });
      // New endpoints are in the probation lane, where a claim takes each queue's head alone.
      expect(claimed).toHaveLength(4);
      const leases = await prisma.webhookDelivery.findMany({ where: { lockedBy: "crashed-host:4242:dead" } });

      const survivor = new WebhookDispatcher(t.server.ctx);
      survivor.start();
      try {
        await rx.waitFor(() => rx.accepted().length === 8, "all eight deliveries");
      } finally {
        await survivor.stop();
      }
      for (let i = 0; i < 4; i++) expect(ids(rx.accepted(`/c${i}`))).toEqual(events.map((e) => e.id));
      expect(rx.requests).toHaveLength(8);
      const leaseEnd = Math.min(...leases.map((l) => l.lockedUntil!.getTime()));
      for (const r of rx.requests) expect(r.receivedAt).toBeGreaterThanOrEqual(leaseEnd);
    } finally {
      await t.close();
      await rx.close();
    }
  });
});

describe("webhook delivery across a graceful restart", () => {
  it("stop() lets in-flight attempts finish and loses nothing: the restarted server sends the rest", async () => {
    // A database that outlives the server: the PostgreSQL schema, or a PGlite data directory on disk.
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "stageline-restart-"));
    const rx = await startReceiver({ responder: () => ({ delayMs: 300 }) });
    const t = await startTestServer({ dataDir });
    const config = t.server.ctx.config;
    let restarted: Awaited<ReturnType<typeof startServer>> | null = null;
    try {
      for (let i = 0; i < 3; i++) await createSubscription(t.server.ctx, { companyId: t.companyId, targetUrl: `${rx.url}/r${i}` });
      const events = await emitEvents(t.server.ctx, t.companyId, 6);
      await rx.waitFor(() => rx.requests.length >= 1, "a delivery in flight");

      await t.close();
      const inFlight = rx.requests.length;
      expect(inFlight).toBeGreaterThanOrEqual(1);
      expect(rx.requests.every((r) => r.answered === 200)).toBe(true);
      expect(rx.accepted().length).toBeLessThan(18);

      restarted = await startServer(testConfig({ dataDir, databaseUrl: config.databaseUrl }));
      await rx.waitFor(() => rx.accepted().length === 18, "all eighteen deliveries", 30_000);

      expect(rx.requests).toHaveLength(18);
      for (let i = 0; i < 3; i++) expect(ids(rx.accepted(`/r${i}`))).toEqual(events.map((e) => e.id));
    } finally {
      await restarted?.close();
      await t.close();
      await rx.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, SEVERAL_SERVERS_TIMEOUT_MS);
});

/**
 * Isolation of webhook endpoints (CONTRACT.md "Events and deliveries": isolation, endpoint health;
 * webhooks/endpoint-health.ts): a healthy endpoint's deliveries are not held up by endpoints that never answer, in
 * another company or its own; a failing endpoint's queue is a circuit breaker (only its head is probed, the first
 * success drains it in order); the outbox's wake-ups lose no delivery when many writes race several dispatchers.
 *
 * Tight budgets make the point without timing assertions: 2 probation slots, 2 healthy slots, and dead endpoints
 * whose attempts would hold a slot for 20 s (the attempt timeout). The healthy endpoint must receive everything
 * while every probation slot is still held by a dead endpoint, i.e. before any of those attempts could time out.
 */
import net from "node:net";
import type { AddressInfo } from "node:net";
import { adoptWakeups, claimDueDeliveries } from "../src/db/webhook-dispatch";
import { requeueDelivery } from "../src/db/webhook-deliveries-log";
import { WebhookDispatcher } from "../src/webhooks/dispatcher";
import { startTestServer, type TestServer } from "./helpers/test-server";
import { createSubscription, emitEvents, startReceiver, waitUntil, type Receiver } from "./helpers/receiver";

process.env.WEBHOOK_RETRY_BASE_MS = "20";
process.env.WEBHOOK_RETRY_MAX_MS = "200";
process.env.WEBHOOK_POLL_MS = "100";
process.env.WEBHOOK_TIMEOUT_MS = "20000";
process.env.WEBHOOK_LEASE_MS = "60000";
process.env.WEBHOOK_CONCURRENCY = "2";
process.env.WEBHOOK_PROBATION_CONCURRENCY = "2";

/** A target that accepts connections, reads what comes and never answers: each attempt hangs until its timeout. */
interface BlackHole {
  url: string;
  /** Connections open now (attempts hanging). */
  open(): number;
  /** Connections accepted so far. */
  accepted(): number;
  /** Stops listening and drops every connection (the hanging attempts end at once). */
  close(): Promise<void>;
}

async function startBlackHole(): Promise<BlackHole> {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  const server = net.createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on("data", () => undefined);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    open: () => sockets.size,
    accepted: () => accepted,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}

/** Polls `condition` every 10 ms; fails after `timeoutMs` naming `what`. */
async function until(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("a healthy endpoint beside endpoints that never answer", () => {
  let t: TestServer;
  let healthy: Receiver;
  let blackHole: BlackHole;
  beforeEach(async () => {
    t = await startTestServer();
    healthy = await startReceiver();
    blackHole = await startBlackHole();
  });
  afterEach(async () => {
    await blackHole.close(); // drops the held connections first, so the dispatcher's stop() need not wait for them
    await healthy.close();
    await t.close();
  });

  /** Makes the healthy endpoint known as healthy (one quick success), as an established endpoint is. */
  async function establish(companyId: string): Promise<string> {
    const sub = await createSubscription(t.server.ctx, { companyId, targetUrl: `${healthy.url}/ok` });
    await emitEvents(t.server.ctx, companyId, 1);
    await healthy.waitFor(() => healthy.accepted().length === 1, "the first delivery");
    await waitUntil(async () => (await t.server.ctx.prisma.webhookSubscription.findUniqueOrThrow({ where: { id: sub.id } })).healthy, "the endpoint to be healthy");
    return sub.id;
  }

  async function crowdAndMeasure(healthyCompanyId: string, deadCompanyId: string) {
    await establish(healthyCompanyId);
    for (let i = 0; i < 12; i++) await createSubscription(t.server.ctx, { companyId: deadCompanyId, targetUrl: `${blackHole.url}/dead-${i}` });
    // Events for the dead endpoints (and, when it is the same company, for the healthy one too).
    await emitEvents(t.server.ctx, deadCompanyId, 3);
    await until(() => blackHole.open() >= 2, "every probation slot held by a dead endpoint");

    const events = healthyCompanyId === deadCompanyId ? [] : await emitEvents(t.server.ctx, healthyCompanyId, 10);
    const expected = 1 + (healthyCompanyId === deadCompanyId ? 3 : 10);
    // 10 s: half the attempt timeout, so none of the held attempts can have ended and freed a slot.
    await healthy.waitFor(() => healthy.accepted().length === expected, `all ${expected} healthy deliveries`, 10_000);
    expect(blackHole.open()).toBe(2); // the dead endpoints' attempts are all still hanging: nothing waited for them
    expect(blackHole.accepted()).toBe(2); // and no more than the probation budget was spent on them
    return events;
  }

  it("in another company: every event arrives in order while all probation slots hang", async () => {
    const other = await t.newCompany("Hostile Co");
    const events = await crowdAndMeasure(t.companyId, other.companyId);
    expect(healthy.accepted().slice(1).map((r) => r.headers["webhook-id"])).toEqual(events.map((e) => e.id));
  });

  it("in its own company: the healthy endpoint still gets every event in order", async () => {
    await crowdAndMeasure(t.companyId, t.companyId);
    const bodies = healthy.accepted().map((r) => JSON.parse(r.body.toString("utf8")).item_id);
    expect(bodies).toEqual(["item-0", "item-0", "item-1", "item-2"]);
  });
});

describe("the probation lane's fair share between companies", () => {
  it("a new endpoint of another company is served while one company's dead crowd contends for the lane", async () => {
    process.env.WEBHOOK_PROBATION_CONCURRENCY = "4";
    process.env.WEBHOOK_PROBATION_PER_COMPANY = "2";
    const t = await startTestServer();
    const rx = await startReceiver();
    const blackHole = await startBlackHole();
    try {
      const hostile = await t.newCompany("Hostile Co");
      for (let i = 0; i < 30; i++) await createSubscription(t.server.ctx, { companyId: hostile.companyId, targetUrl: `${blackHole.url}/dead-${i}` });
      await emitEvents(t.server.ctx, hostile.companyId, 1);
      await until(() => blackHole.open() >= 2, "the hostile company's share of the probation lane");
      // A brand-new endpoint (probation lane: it has not proven itself yet) of another company.
      await createSubscription(t.server.ctx, { companyId: t.companyId, targetUrl: `${rx.url}/new` });
      const events = await emitEvents(t.server.ctx, t.companyId, 3);
      await rx.waitFor(() => rx.accepted().length === 3, "the new endpoint's deliveries", 10_000);
      expect(rx.accepted().map((r) => r.headers["webhook-id"])).toEqual(events.map((e) => e.id));
      // The hostile company never had more than its share of slots, however many dead endpoints were due.
      expect(blackHole.accepted()).toBe(2);
    } finally {
      await blackHole.close();
      await rx.close();
      await t.close();
      process.env.WEBHOOK_PROBATION_CONCURRENCY = "2";
      delete process.env.WEBHOOK_PROBATION_PER_COMPANY;
    }
  });
});

describe("a failing endpoint's queue is a circuit breaker", () => {
  let t: TestServer;
  let rx: Receiver;
  beforeAll(async () => {
    t = await startTestServer();
    rx = await startReceiver({ responder: () => ({ status: 503 }) });
  });
  afterAll(async () => {
    await rx.close();
    await t.close();
  });

  it("probes only the head while failing, shows failing_since and next_attempt_at, then drains in order on the first success", async () => {
    const key = await t.newKey(["hooks:manage"]);
    const sub = await t.request("POST", "/v1/ext/webhooks", { target_url: `${rx.url}/flaky`, event: "item.created" }, key.key);
    expect(sub.status).toBe(201);
    const id = (sub.body as { id: string }).id;
    const events = await emitEvents(t.server.ctx, t.companyId, 5);
    await rx.waitFor(() => rx.requests.length >= 4, "four failed probes");

    // Only the head was tried: the held queue waits behind it (order kept).
    expect(new Set(rx.requests.map((r) => r.headers["webhook-id"]))).toEqual(new Set([events[0].id]));
    const failing = (await t.request("GET", "/v1/ext/webhooks", undefined, key.key)).body as Array<Record<string, string | null>>;
    const shown = failing.find((s) => s.id === id)!;
    expect(shown.failing_since).not.toBeNull();
    expect(Date.parse(shown.failing_since!)).toBeLessThanOrEqual(rx.requests[0].receivedAt + 5);
    expect(shown.next_attempt_at).not.toBeNull();
    const row = await t.server.ctx.prisma.webhookSubscription.findUniqueOrThrow({ where: { id } });
    expect(row.healthy).toBe(false);
    expect(row.consecutiveFailures).toBeGreaterThanOrEqual(4);

    rx.respondWith(() => ({ status: 204 }));
    await rx.waitFor(() => rx.accepted().length === 5, "all five events after recovery");
    expect(rx.accepted().map((r) => r.headers["webhook-id"])).toEqual(events.map((e) => e.id));
    await waitUntil(async () => {
      const list = (await t.request("GET", "/v1/ext/webhooks", undefined, key.key)).body as Array<Record<string, string | null>>;
      const s = list.find((x) => x.id === id)!;
      return s.failing_since === null && s.next_attempt_at === null;
    }, "failing_since and next_attempt_at cleared");
    const healed = await t.server.ctx.prisma.webhookSubscription.findUniqueOrThrow({ where: { id } });
    expect(healed).toMatchObject({ healthy: true, failingSince: null, consecutiveFailures: 0 });
  });
});

describe("wake-ups under racing writes and two dispatchers", () => {
  it("every event reaches every subscription once, in seq order, when many writes race two dispatchers", async () => {
    process.env.WEBHOOK_CONCURRENCY = "16";
    process.env.WEBHOOK_PROBATION_CONCURRENCY = "16";
    const t = await startTestServer();
    const rx = await startReceiver();
    const second = new WebhookDispatcher(t.server.ctx);
    second.start();
    try {
      const subs = [];
      for (let i = 0; i < 3; i++) subs.push(await createSubscription(t.server.ctx, { companyId: t.companyId, targetUrl: `${rx.url}/r${i}` }));
      // 8 writers at once, 15 events each: commits interleave with both dispatchers' claims and adoptions.
      await Promise.all(Array.from({ length: 8 }, () => emitEvents(t.server.ctx, t.companyId, 15)));
      await rx.waitFor(() => rx.accepted().length === 3 * 120, "every delivery", 75_000);
      const bySeq = (await t.server.ctx.prisma.webhookEvent.findMany({ where: { companyId: t.companyId }, orderBy: { seq: "asc" }, select: { id: true } })).map((e) => e.id);
      for (let i = 0; i < 3; i++) {
        const got = rx.accepted(`/r${i}`).map((r) => r.headers["webhook-id"]);
        expect(got).toEqual(bySeq);
      }
      expect(rx.requests).toHaveLength(3 * 120); // each once
      // Nothing left behind: no pending delivery, no unconsumed wake-up, every queue idle.
      await waitUntil(async () => (await t.server.ctx.prisma.webhookSubscription.count({ where: { nextDueAt: { not: null } } })) === 0, "idle queues");
      expect(await t.server.ctx.prisma.webhookDelivery.count({ where: { state: "pending" } })).toBe(0);
      expect(await t.server.ctx.prisma.webhookQueueWakeup.count()).toBe(0);
    } finally {
      await second.stop();
      await rx.close();
      await t.close();
      process.env.WEBHOOK_CONCURRENCY = "2";
      process.env.WEBHOOK_PROBATION_CONCURRENCY = "2";
    }
    // 360 deliveries through two dispatchers on PGlite: 5 s alone on an idle machine, 24 s with one other test run
    // beside it, over jest's default 30 s in a full three-worker pass on two cores. The assertions are about order and
    // exactly-once delivery, not speed (speed is bench/'s job), so the test gets the time a loaded machine needs.
  }, 90_000);

  it("a redelivered head is claimed alone while its queue's batch is in flight elsewhere: no follower is skipped", async () => {
    const t = await startTestServer();
    try {
      await t.server.dispatcher.stop();
      const prisma = t.server.ctx.prisma;
      const sub = await createSubscription(t.server.ctx, { companyId: t.companyId, targetUrl: "http://127.0.0.1:9/none" });
      await emitEvents(t.server.ctx, t.companyId, 6);
      await adoptWakeups(prisma, 1_000);
      await prisma.webhookSubscription.update({ where: { id: sub.id }, data: { healthy: true } });
      const lanes = { healthy: 10, probation: 10 };
      const a = await claimDueDeliveries(prisma, { ownerId: "a", lanes, leaseMs: 30_000, batchSize: 3 });
      expect(a.map((d) => Number(d.seq))).toHaveLength(3);
      // A sent the first and is sending the second and third; the first is then resent from the console.
      await prisma.webhookDelivery.update({ where: { id: a[0].id }, data: { state: "succeeded", completedAt: new Date(), lockedBy: null, lockedUntil: null } });
      expect(await requeueDelivery(prisma, sub.id, a[0].id, new Date())).toBe("requeued");

      const b = await claimDueDeliveries(prisma, { ownerId: "b", lanes, leaseMs: 30_000, batchSize: 8 });
      expect(b.map((d) => d.id)).toEqual([a[0].id]); // not the 4th to 6th: the 2nd and 3rd are still in flight
    } finally {
      await t.close();
    }
  });

  it("the claim reads queues, not deliveries: a queue whose head is not due is rescheduled to that time without claiming", async () => {
    const t = await startTestServer();
    try {
      await t.server.dispatcher.stop();
      const sub = await createSubscription(t.server.ctx, { companyId: t.companyId, targetUrl: "http://127.0.0.1:9/none" });
      await emitEvents(t.server.ctx, t.companyId, 3);
      const prisma = t.server.ctx.prisma;
      const later = new Date(Date.now() + 60_000);
      const head = await prisma.webhookDelivery.findFirstOrThrow({ where: { subscriptionId: sub.id }, orderBy: { seq: "asc" } });
      await prisma.webhookDelivery.update({ where: { id: head.id }, data: { nextAttemptAt: later } });
      // Not adopted yet: the queue is idle as far as the claim knows.
      expect(await claimDueDeliveries(prisma, { ownerId: "t", lanes: { healthy: 10, probation: 10 }, leaseMs: 30_000, batchSize: 8 })).toEqual([]);
      await prisma.webhookSubscription.update({ where: { id: sub.id }, data: { nextDueAt: new Date(Date.now() - 1) } });
      // Due by the queue, but its head is not: nothing is claimed (the followers wait behind it) and the queue
      // is scheduled at the head's time.
      expect(await claimDueDeliveries(prisma, { ownerId: "t", lanes: { healthy: 10, probation: 10 }, leaseMs: 30_000, batchSize: 8 })).toEqual([]);
      const queue = await prisma.webhookSubscription.findUniqueOrThrow({ where: { id: sub.id } });
      expect(queue.nextDueAt?.getTime()).toBe(later.getTime());
    } finally {
      await t.close();
    }
  });
});

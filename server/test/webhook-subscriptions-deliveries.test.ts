import http from "node:http";
import type { AddressInfo } from "node:net";
import { WebhookDeliverySchema } from "@stageline/shared";
import { startTestServer, type TestServer } from "./helpers/test-server";

describe("the delivery log of a subscription", () => {
  let t: TestServer;
  let receiver: http.Server;
  let company: Awaited<ReturnType<TestServer["newCompany"]>>;
  let subId: string;
  let otherSubId: string;
  const ids = { succeeded: "", failed: "", pending: "", otherSubscription: "" };
  const base = Date.parse("2026-02-01T12:00:00.000Z");
  const at = (minutes: number) => new Date(base + minutes * 60_000);

  beforeAll(async () => {
    t = await startTestServer();
    // The log is set up row by row below; no dispatcher may change it meanwhile.
    await t.server.dispatcher.stop();
    receiver = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(200).end("ok"));
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    const target = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

    company = await t.newCompany("Delivery Log Co");
    const subscribe = async () =>
      (await t.request("POST", "/v1/ext/webhooks", { target_url: target, event: "task.created" }, company.apiKey)).body.id as string;
    subId = await subscribe();
    otherSubId = await subscribe();

    const prisma = t.server.ctx.prisma;
    const event = async () =>
      prisma.webhookEvent.create({ data: { companyId: company.companyId, type: "task.created", resourceId: "task-1", payload: { task_id: "task-1" } } });
    const delivery = async (subscriptionId: string, minutes: number, data: Record<string, unknown>) => {
      const e = await event();
      return (await prisma.webhookDelivery.create({ data: { eventId: e.id, subscriptionId, seq: e.seq, createdAt: at(minutes), ...data } })).id;
    };
    ids.succeeded = await delivery(subId, 0, { state: "succeeded", attemptCount: 1, lastStatus: 200, nextAttemptAt: at(0), completedAt: at(0.1) });
    ids.failed = await delivery(subId, 1, { state: "failed", attemptCount: 3, lastStatus: 404, nextAttemptAt: at(5), completedAt: at(5) });
    ids.pending = await delivery(subId, 2, { state: "pending", attemptCount: 1, lastStatus: 503, nextAttemptAt: at(4) });
    ids.otherSubscription = await delivery(otherSubId, 3, { state: "failed", attemptCount: 1, lastStatus: 500, completedAt: at(3) });

    await prisma.webhookAttempt.createMany({
      data: [
        { deliveryId: ids.succeeded, attemptedAt: at(0.1), responseStatus: 200, durationMs: 42, responseExcerpt: "ok" },
        { deliveryId: ids.failed, attemptedAt: at(1.1), responseStatus: 500, durationMs: 80, responseExcerpt: "boom", nextAttemptAt: at(2) },
        { deliveryId: ids.failed, attemptedAt: at(2), responseStatus: null, durationMs: 10000, error: "timeout after 10 s", nextAttemptAt: at(5) },
        { deliveryId: ids.failed, attemptedAt: at(5), responseStatus: 404, durationMs: 30, responseExcerpt: "not here" },
        { deliveryId: ids.pending, attemptedAt: at(2.1), responseStatus: 503, durationMs: 15, responseExcerpt: "busy", nextAttemptAt: at(4) },
      ],
    });
  });
  afterAll(async () => {
    await t?.close();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  const get = (path: string, key = company.apiKey) => t.request("GET", path, undefined, key);

  it("lists the subscription's deliveries newest first", async () => {
    const res = await get(`/v1/ext/webhooks/${subId}/deliveries`);
    expect(res.status).toBe(200);
    expect(res.body.map((d: { id: string }) => d.id)).toEqual([ids.pending, ids.failed, ids.succeeded]);
    for (const entry of res.body) expect(WebhookDeliverySchema.parse(entry)).toEqual(entry);
  });

  it("shows each delivery with every attempt, newest attempt first", async () => {
    const res = await get(`/v1/ext/webhooks/${subId}/deliveries`);
    const failed = res.body.find((d: { id: string }) => d.id === ids.failed);
    expect(failed).toEqual({
      id: ids.failed,
      event_id: expect.any(String),
      event: "task.created",
      state: "failed",
      attempt_count: 3,
      next_attempt_at: null,
      created_at: at(1).toISOString(),
      completed_at: at(5).toISOString(),
      last_status: 404,
      attempts: [
        { attempted_at: at(5).toISOString(), response_status: 404, duration_ms: 30, response_excerpt: "not here", error: null, next_attempt_at: null },
        { attempted_at: at(2).toISOString(), response_status: null, duration_ms: 10000, response_excerpt: null, error: "timeout after 10 s", next_attempt_at: at(5).toISOString() },
        { attempted_at: at(1.1).toISOString(), response_status: 500, duration_ms: 80, response_excerpt: "boom", error: null, next_attempt_at: at(2).toISOString() },
      ],
    });
  });

  it("shows when a pending delivery is due next", async () => {
    const res = await get(`/v1/ext/webhooks/${subId}/deliveries`);
    expect(res.body[0]).toMatchObject({ id: ids.pending, state: "pending", next_attempt_at: at(4).toISOString(), completed_at: null });
  });

  it("filters by state", async () => {
    const res = await get(`/v1/ext/webhooks/${subId}/deliveries?state=failed`);
    expect(res.body.map((d: { id: string }) => d.id)).toEqual([ids.failed]);
  });

  it("rejects an unknown state as 400 listing the states", async () => {
    const res = await get(`/v1/ext/webhooks/${subId}/deliveries?state=lost`);
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toEqual({ path: "state", message: expect.stringContaining("pending, succeeded, failed") });
  });

  it("pages with limit and a Link header", async () => {
    const first = await get(`/v1/ext/webhooks/${subId}/deliveries?limit=2`);
    expect(first.body.map((d: { id: string }) => d.id)).toEqual([ids.pending, ids.failed]);
    const next = new URL(first.headers.get("link")!.match(/<([^>]+)>/)![1]!);
    const second = await get(next.pathname + next.search);
    expect(second.body.map((d: { id: string }) => d.id)).toEqual([ids.succeeded]);
    expect(second.headers.get("link")).toBeNull();
  });

  it("answers 404 for another company's subscription", async () => {
    const res = await get(`/v1/ext/webhooks/${subId}/deliveries`, (await t.newKey(["hooks:manage"])).key);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("not_found");
  });

  it("requires the hooks:manage scope", async () => {
    const res = await get(`/v1/ext/webhooks/${subId}/deliveries`, (await t.newKey(["tasks:read"])).key);
    expect(res.status).toBe(403);
  });

  describe("redeliver", () => {
    const redeliver = (subscriptionId: string, deliveryId: string, key = company.apiKey) =>
      t.request("POST", `/v1/ext/webhooks/${subscriptionId}/deliveries/${deliveryId}/redeliver`, undefined, key);

    it("answers 202 with the delivery back in the queue, due now, its attempt history kept", async () => {
      const before = Date.now();
      const res = await redeliver(subId, ids.failed);
      expect(res.status).toBe(202);
      expect(WebhookDeliverySchema.parse(res.body)).toEqual(res.body);
      expect(res.body).toMatchObject({ id: ids.failed, state: "pending", completed_at: null, attempt_count: 3, last_status: 404 });
      expect(res.body.attempts).toHaveLength(3);
      expect(Date.parse(res.body.next_attempt_at)).toBeGreaterThanOrEqual(before - 1000);
    });

    it("releases a delivery a dispatcher holds, so it is picked up again", async () => {
      const prisma = t.server.ctx.prisma;
      await prisma.webhookDelivery.update({ where: { id: ids.pending }, data: { lockedUntil: new Date(Date.now() + 60_000), lockedBy: "worker-1" } });
      expect((await redeliver(subId, ids.pending)).status).toBe(202);
      const row = await prisma.webhookDelivery.findUniqueOrThrow({ where: { id: ids.pending } });
      expect(row).toMatchObject({ state: "pending", lockedUntil: null, completedAt: null });
      expect(row.nextAttemptAt.getTime()).toBeLessThanOrEqual(Date.now());
    });

    it("answers 404 for a delivery of another subscription", async () => {
      const res = await redeliver(subId, ids.otherSubscription);
      expect(res.status).toBe(404);
      const row = await t.server.ctx.prisma.webhookDelivery.findUniqueOrThrow({ where: { id: ids.otherSubscription } });
      expect(row.state).toBe("failed");
    });

    it("answers 404 for an unknown delivery", async () => {
      expect((await redeliver(subId, "no-such-delivery")).status).toBe(404);
    });

    it("answers 404 for another company's subscription", async () => {
      const res = await redeliver(otherSubId, ids.otherSubscription, (await t.newKey(["hooks:manage"])).key);
      expect(res.status).toBe(404);
    });

    it("refuses as 422 when the subscription was disabled, since nothing would be sent", async () => {
      const prisma = t.server.ctx.prisma;
      await prisma.webhookSubscription.update({ where: { id: otherSubId }, data: { disabledAt: new Date(), disabledReason: "no success for 3 days" } });
      const res = await redeliver(otherSubId, ids.otherSubscription);
      expect(res.status).toBe(422);
      expect(res.body.code).toBe("invalid_reference");
      expect(res.body.detail).toContain("no success for 3 days");
      expect((await prisma.webhookDelivery.findUniqueOrThrow({ where: { id: ids.otherSubscription } })).state).toBe("failed");
    });
  });
});

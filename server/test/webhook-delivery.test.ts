/**
 * Webhook deliveries as a target sees them (CONTRACT.md "Events and deliveries"): a real server, a real local
 * receiver, events written through the outbox. Fast retries (20 ms base) and a one-minute fallback poll, so a
 * delivery that arrives at all was woken by its commit or by its scheduled retry.
 */
import dns from "node:dns";
import { Webhook } from "standardwebhooks";
import { startTestServer, type TestServer } from "./helpers/test-server";
import { createSubscription, emitEvents, newWebhookSecret, startReceiver, waitUntil, type Receiver } from "./helpers/receiver";

process.env.WEBHOOK_RETRY_BASE_MS = "20";
process.env.WEBHOOK_RETRY_MAX_MS = "5000"; // also caps Retry-After
process.env.WEBHOOK_POLL_MS = "60000";

/** Starts a test server with extra dispatcher environment variables set only while it starts. */
async function startWithEnv(env: Record<string, string>, overrides: Parameters<typeof startTestServer>[0] = {}): Promise<TestServer> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    return await startTestServer(overrides);
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

describe("webhook delivery", () => {
  let t: TestServer;
  let rx: Receiver;
  let n = 0;
  /** A subscription on its own receiver path, so tests never see each other's requests. */
  const subscribe = async (extra: { previousSecret?: string; previousSecretExpiresAt?: Date } = {}) => {
    const path = `/hooks/${++n}`;
    const sub = await createSubscription(t.server.ctx, { companyId: t.companyId, targetUrl: rx.url + path, ...extra });
    return { ...sub, path };
  };
  const requestsTo = (path: string) => rx.requests.filter((r) => r.path === path);
  const deliveriesOf = (subscriptionId: string) =>
    t.server.ctx.prisma.webhookDelivery.findMany({ where: { subscriptionId }, include: { attempts: { orderBy: { attemptedAt: "asc" } } }, orderBy: { seq: "asc" } });

  beforeAll(async () => {
    t = await startTestServer();
    rx = await startReceiver();
  });
  afterAll(async () => {
    await t?.close();
    await rx?.close();
  });

  it("is sent as soon as its event commits, without waiting for the fallback poll", async () => {
    const sub = await subscribe();
    await emitEvents(t.server.ctx, t.companyId, 1);
    // The fallback poll runs once a minute here: only the commit's wake-up can bring it this fast.
    await rx.waitFor(() => rx.accepted(sub.path).length === 1, "the delivery", 5_000);
  });

  it("carries the event payload as its exact body and Standard Webhooks headers that verify with the secret", async () => {
    const sub = await subscribe();
    const [event] = await emitEvents(t.server.ctx, t.companyId, 1);
    await rx.waitFor(() => rx.accepted(sub.path).length === 1, "the delivery");
    const req = rx.accepted(sub.path)[0];
    const stored = await t.server.ctx.prisma.webhookEvent.findUniqueOrThrow({ where: { id: event.id } });

    expect(req.method).toBe("POST");
    expect(req.body.equals(Buffer.from(JSON.stringify(stored.payload), "utf8"))).toBe(true);
    expect(JSON.parse(req.body.toString("utf8"))).toEqual(event.payload);
    expect(req.headers["content-type"]).toBe("application/json");
    expect(req.headers["user-agent"]).toBe("Stageline-Webhooks/1.0");
    expect(req.headers["x-webhook-event"]).toBe("item.created");
    expect(req.headers["webhook-id"]).toBe(event.id);
    expect(Math.abs(Number(req.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(300);
    expect(req.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(sub.secret).verify(req.body.toString("utf8"), req.headers)).toEqual(event.payload);
    expect(() => new Webhook(newWebhookSecret()).verify(req.body.toString("utf8"), req.headers)).toThrow();
  });

  it("records a succeeded delivery with one logged attempt", async () => {
    const sub = await subscribe();
    rx.respondWith((r) => (r.path === sub.path ? { status: 202, body: "queued" } : undefined));
    await emitEvents(t.server.ctx, t.companyId, 1);
    await rx.waitFor(() => rx.accepted(sub.path).length === 1, "the delivery");
    await waitUntil(async () => (await deliveriesOf(sub.id))[0]?.state === "succeeded", "the succeeded state");
    const [delivery] = await deliveriesOf(sub.id);
    expect(delivery).toMatchObject({ attemptCount: 1, lastStatus: 202, lastError: null, lockedBy: null, lockedUntil: null });
    expect(delivery.completedAt).toBeInstanceOf(Date);
    expect(delivery.attempts).toHaveLength(1);
    expect(delivery.attempts[0]).toMatchObject({ responseStatus: 202, responseExcerpt: "queued", error: null, nextAttemptAt: null });
    rx.respondWith(() => undefined);
  });

  it("signs with both the new and the previous secret during a rotation overlap", async () => {
    const previous = newWebhookSecret();
    const sub = await subscribe({ previousSecret: previous, previousSecretExpiresAt: new Date(Date.now() + 3_600_000) });
    await emitEvents(t.server.ctx, t.companyId, 1);
    await rx.waitFor(() => rx.accepted(sub.path).length === 1, "the delivery");
    const req = rx.accepted(sub.path)[0];
    expect(req.headers["webhook-signature"].split(" ")).toHaveLength(2);
    expect(() => new Webhook(sub.secret).verify(req.body.toString("utf8"), req.headers)).not.toThrow();
    expect(() => new Webhook(previous).verify(req.body.toString("utf8"), req.headers)).not.toThrow();
  });

  it("signs with the current secret only once the rotation overlap has ended", async () => {
    const previous = newWebhookSecret();
    const sub = await subscribe({ previousSecret: previous, previousSecretExpiresAt: new Date(Date.now() - 1_000) });
    await emitEvents(t.server.ctx, t.companyId, 1);
    await rx.waitFor(() => rx.accepted(sub.path).length === 1, "the delivery");
    const req = rx.accepted(sub.path)[0];
    expect(req.headers["webhook-signature"].split(" ")).toHaveLength(1);
    expect(() => new Webhook(sub.secret).verify(req.body.toString("utf8"), req.headers)).not.toThrow();
    expect(() => new Webhook(previous).verify(req.body.toString("utf8"), req.headers)).toThrow();
  });

  it("is retried after 5xx answers until the target accepts it, every attempt in the delivery log", async () => {
    const sub = await subscribe();
    rx.respondWith((r) => (r.path === sub.path && requestsTo(sub.path).length <= 3 ? { status: 503, body: "down for maintenance" } : undefined));
    const [event] = await emitEvents(t.server.ctx, t.companyId, 1);
    await rx.waitFor(() => rx.accepted(sub.path).length === 1, "the delivery to be accepted");
    rx.respondWith(() => undefined);

    expect(requestsTo(sub.path).map((r) => r.headers["webhook-id"])).toEqual([event.id, event.id, event.id, event.id]);
    await waitUntil(async () => (await deliveriesOf(sub.id))[0]?.state === "succeeded", "the succeeded state");
    const [delivery] = await deliveriesOf(sub.id);
    expect(delivery.attemptCount).toBe(4);
    expect(delivery.attempts.map((a) => a.responseStatus)).toEqual([503, 503, 503, 200]);
    expect(delivery.attempts[0]).toMatchObject({ responseExcerpt: "down for maintenance", error: "HTTP 503" });
    for (const failed of delivery.attempts.slice(0, 3)) expect(failed.nextAttemptAt).toBeInstanceOf(Date);
    expect(delivery.attempts[3].nextAttemptAt).toBeNull();
  });

  it("is not retried after a 400: one attempt, the delivery failed, and later events still go out", async () => {
    const sub = await subscribe();
    rx.respondWith((r) => (r.path === sub.path && requestsTo(sub.path).length === 1 ? { status: 400, body: "bad payload" } : undefined));
    const [first, second] = await emitEvents(t.server.ctx, t.companyId, 2);
    await rx.waitFor(() => rx.accepted(sub.path).length === 1, "the second event");
    rx.respondWith(() => undefined);

    expect(requestsTo(sub.path).map((r) => r.headers["webhook-id"])).toEqual([first.id, second.id]);
    await waitUntil(async () => (await deliveriesOf(sub.id)).every((d) => d.state !== "pending"), "both deliveries to end");
    const [failed, succeeded] = await deliveriesOf(sub.id);
    expect(failed).toMatchObject({ state: "failed", attemptCount: 1, lastStatus: 400, lastError: "HTTP 400" });
    expect(failed.attempts).toEqual([expect.objectContaining({ responseStatus: 400, responseExcerpt: "bad payload", nextAttemptAt: null })]);
    expect(succeeded.state).toBe("succeeded");
  });

  it("does not follow a redirect: the delivery fails, naming the redirect", async () => {
    const sub = await subscribe();
    rx.respondWith((r) => (r.path === sub.path ? { status: 302, headers: { location: `${rx.url}/elsewhere` } } : undefined));
    await emitEvents(t.server.ctx, t.companyId, 1);
    await waitUntil(async () => (await deliveriesOf(sub.id))[0]?.state === "failed", "the failed state");
    rx.respondWith(() => undefined);

    expect(rx.requests.filter((r) => r.path === "/elsewhere")).toHaveLength(0);
    const [delivery] = await deliveriesOf(sub.id);
    expect(delivery.attemptCount).toBe(1);
    expect(delivery.lastStatus).toBe(302);
    expect(delivery.lastError).toMatch(/redirect not followed.*\/elsewhere/);
  });

  it("deletes the subscription, with its pending deliveries, when the target answers 410 Gone", async () => {
    const sub = await subscribe();
    rx.respondWith((r) => (r.path === sub.path ? { status: 410 } : undefined));
    await emitEvents(t.server.ctx, t.companyId, 3);
    await waitUntil(async () => (await t.server.ctx.prisma.webhookSubscription.count({ where: { id: sub.id } })) === 0, "the subscription to be deleted");
    rx.respondWith(() => undefined);

    expect(requestsTo(sub.path)).toHaveLength(1);
    expect(await t.server.ctx.prisma.webhookDelivery.count({ where: { subscriptionId: sub.id } })).toBe(0);
    await emitEvents(t.server.ctx, t.companyId, 1);
    expect(await t.server.ctx.prisma.webhookDelivery.count({ where: { subscriptionId: sub.id } })).toBe(0);
  });

  it("waits as long as a 429's Retry-After asks before trying again", async () => {
    const sub = await subscribe();
    rx.respondWith((r) => (r.path === sub.path && requestsTo(sub.path).length === 1 ? { status: 429, headers: { "retry-after": "2" } } : undefined));
    await emitEvents(t.server.ctx, t.companyId, 1);
    await rx.waitFor(() => rx.accepted(sub.path).length === 1, "the retried delivery");
    rx.respondWith(() => undefined);

    await waitUntil(async () => (await deliveriesOf(sub.id))[0]?.state === "succeeded", "the succeeded state");
    const [delivery] = await deliveriesOf(sub.id);
    const [limited] = delivery.attempts;
    expect(limited.responseStatus).toBe(429);
    // The retry is planned 2 s after the 429 arrived, and the second request came no earlier.
    expect(limited.nextAttemptAt!.getTime() - limited.attemptedAt.getTime()).toBeGreaterThanOrEqual(2_000);
    const [, retried] = requestsTo(sub.path);
    expect(retried.receivedAt).toBeGreaterThanOrEqual(limited.nextAttemptAt!.getTime());
  });
});

describe("webhook delivery to a slow target", () => {
  let t: TestServer;
  let rx: Receiver;
  beforeAll(async () => {
    t = await startWithEnv({ WEBHOOK_TIMEOUT_MS: "300" });
    rx = await startReceiver();
  });
  afterAll(async () => {
    await t?.close();
    await rx?.close();
  });

  it("times out after the attempt timeout and is retried", async () => {
    rx.respondWith((r) => (r.index === 0 ? { delayMs: 1_500 } : undefined));
    const sub = await createSubscription(t.server.ctx, { companyId: t.companyId, targetUrl: `${rx.url}/slow` });
    const [event] = await emitEvents(t.server.ctx, t.companyId, 1);
    await rx.waitFor(() => rx.accepted("/slow").length === 1, "the retried delivery");

    expect(rx.requests.map((r) => r.headers["webhook-id"])).toEqual([event.id, event.id]);
    expect(rx.requests[0].answered).toBeNull();
    await waitUntil(async () => (await t.server.ctx.prisma.webhookDelivery.findFirst({ where: { subscriptionId: sub.id } }))?.state === "succeeded", "success");
    const attempts = await t.server.ctx.prisma.webhookAttempt.findMany({ where: { delivery: { subscriptionId: sub.id } }, orderBy: { attemptedAt: "asc" } });
    expect(attempts[0]).toMatchObject({ responseStatus: null, error: "timed out: no response within 300 ms" });
    expect(attempts[0].nextAttemptAt).toBeInstanceOf(Date);
    expect(attempts[1].responseStatus).toBe(200);
  });
});

describe("webhook delivery in production mode", () => {
  let t: TestServer;
  let rx: Receiver;
  beforeAll(async () => {
    t = await startTestServer({ mode: "production" });
    rx = await startReceiver();
  });
  afterAll(async () => {
    await t?.close();
    await rx?.close();
  });

  /** Subscribes `targetUrl`, emits one event, and returns its delivery (with attempts) once it has failed. */
  const failedDeliveryTo = async (targetUrl: string) => {
    const prisma = t.server.ctx.prisma;
    const sub = await createSubscription(t.server.ctx, { companyId: t.companyId, targetUrl });
    await emitEvents(t.server.ctx, t.companyId, 1);
    await waitUntil(async () => (await prisma.webhookDelivery.findFirst({ where: { subscriptionId: sub.id } }))?.state === "failed", "the failed state");
    const delivery = await prisma.webhookDelivery.findFirstOrThrow({ where: { subscriptionId: sub.id }, include: { attempts: true } });
    await prisma.webhookSubscription.delete({ where: { id: sub.id } }); // keep later tests' events away from it
    return delivery;
  };

  it("refuses a loopback IP target at send time without contacting it", async () => {
    const delivery = await failedDeliveryTo(`https://127.0.0.1:${rx.port}/hook`);
    expect(delivery.attemptCount).toBe(1);
    expect(delivery.lastError).toMatch(/^refused: 127\.0\.0\.1 is not a public address/);
    expect(delivery.attempts).toEqual([expect.objectContaining({ responseStatus: null, nextAttemptAt: null })]);
    expect(rx.requests).toHaveLength(0);
  });

  it("refuses a hostname that resolves to a loopback address, checked on the address it would connect to", async () => {
    const delivery = await failedDeliveryTo(`https://localhost:${rx.port}/hook`);
    expect(delivery.lastError).toMatch(/^refused: localhost resolves to (127\.0\.0\.1|::1), which is not a public address/);
    expect(rx.requests).toHaveLength(0);
  });

  it("refuses a plain http target", async () => {
    const delivery = await failedDeliveryTo("http://hooks.example.com/x");
    expect(delivery.lastError).toBe("refused: production mode delivers only to https targets");
  });

  // DNS rebinding: the subscribe check cannot resolve a name once and for all (the answer may change), so the address
  // is checked again at every delivery, inside the socket's own lookup, on the addresses it would connect to.
  it.each([
    ["a private address", "10.20.30.40", 4],
    ["cloud metadata (link-local)", "169.254.169.254", 4],
    ["a unique-local IPv6 address", "fd00::5", 6],
    ["an IPv4-mapped loopback address", "::ffff:127.0.0.1", 6],
  ])("refuses a name that resolves to %s at delivery time, though the subscribe accepted it", async (_label, address, family) => {
    const host = `rebind-${family}-${address.replace(/[^0-9a-f]/gi, "")}.hooks.example.com`;
    const subscribed = await t.request("POST", "/v1/ext/webhooks", { target_url: `https://${host}/hook`, event: "item.created" });
    expect(subscribed.status).toBe(201);
    await t.server.ctx.prisma.webhookSubscription.delete({ where: { id: subscribed.body.id } });
    const realLookup = dns.lookup;
    const lookup = jest.spyOn(dns, "lookup").mockImplementation(((hostname: string, options: unknown, callback: unknown) => {
      if (hostname !== host) return (realLookup as (...a: unknown[]) => void)(hostname, options, callback);
      const done = (typeof options === "function" ? options : callback) as (err: null, a: dns.LookupAddress[]) => void;
      process.nextTick(() => done(null, [{ address, family }]));
    }) as unknown as typeof dns.lookup);
    try {
      const delivery = await failedDeliveryTo(`https://${host}/hook`);
      expect(lookup).toHaveBeenCalledWith(host, expect.anything(), expect.any(Function));
      expect(delivery.attemptCount).toBe(1);
      expect(delivery.lastError).toBe(`refused: ${host} resolves to ${address}, which is not a public address (production mode delivers only to public addresses)`);
      expect(delivery.attempts).toEqual([expect.objectContaining({ responseStatus: null, nextAttemptAt: null })]);
    } finally {
      lookup.mockRestore();
    }
  });
});

describe("webhook delivery in test (and development) mode", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ mode: "test" });
  });
  afterAll(async () => {
    await t?.close();
  });

  // Subscriptions made before the subscribe check tightened (or written directly) must not reach these either.
  it.each([
    ["a private address", "http://10.255.255.1:9/hook", /^refused: 10\.255\.255\.1 is not a public or loopback address/],
    ["cloud metadata (link-local)", "http://169.254.169.254/latest/meta-data", /^refused: 169\.254\.169\.254 is not a public or loopback address/],
    ["an IPv4-compatible IPv6 address", "http://[::127.0.0.1]:9/hook", /^refused: ::7f00:1 is not a public or loopback address/],
  ])("refuses %s at send time, without contacting it", async (_label, targetUrl, error) => {
    const prisma = t.server.ctx.prisma;
    const sub = await createSubscription(t.server.ctx, { companyId: t.companyId, targetUrl });
    await emitEvents(t.server.ctx, t.companyId, 1);
    await waitUntil(async () => (await prisma.webhookDelivery.findFirst({ where: { subscriptionId: sub.id } }))?.state === "failed", "the failed state");
    const delivery = await prisma.webhookDelivery.findFirstOrThrow({ where: { subscriptionId: sub.id }, include: { attempts: true } });
    await prisma.webhookSubscription.delete({ where: { id: sub.id } });
    expect(delivery.attemptCount).toBe(1);
    expect(delivery.lastError).toMatch(error);
    expect(delivery.attempts).toEqual([expect.objectContaining({ responseStatus: null, nextAttemptAt: null })]);
  });
});

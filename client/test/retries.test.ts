/**
 * CONTRACT "Client library": which calls are retried, and that a retried create keeps its idempotency key.
 * nock plays the server; the virtual clock records backoff instead of sleeping.
 */
import { ConnectionError, NotFoundError, ServerError, Stageline, ValidationError, ConflictError } from "../src";
import { backoffMs, MAX_BACKOFF_MS } from "../src/retry-policy";
import { api, API_KEY, client, CREATE_BODY, item, ORIGIN, problem, rateHeaders, recordingKey, useNock, useVirtualClock } from "./helpers/setup";

useNock();
const time = useVirtualClock();

describe("creates retried after a failure reuse their idempotency key", () => {
  it("sends a random key and reuses it after a 5xx", async () => {
    const keys: string[] = [];
    api()
      .post("/v1/ext/items", CREATE_BODY)
      .reply(recordingKey(keys, 503, problem(503, "internal")))
      .post("/v1/ext/items", CREATE_BODY)
      .reply(recordingKey(keys, 201, item("1")));
    await expect(client().items.create(CREATE_BODY)).resolves.toMatchObject({ item_id: "1" });
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(time.sleeps).toHaveLength(1);
  });

  it("reuses the caller's key after a timeout", async () => {
    const keys: string[] = [];
    api()
      .post("/v1/ext/items")
      .delay(3000)
      .reply(recordingKey(keys, 201, item("late")))
      .post("/v1/ext/items")
      .reply(recordingKey(keys, 201, item("1")));
    const created = await client({ timeoutMs: 250 }).items.create(CREATE_BODY, { idempotencyKey: "row-7" });
    expect(created.item_id).toBe("1");
    expect(keys).toEqual(["row-7", "row-7"]);
  });

  it("reuses the key after a 429 and waits Retry-After", async () => {
    const keys: string[] = [];
    api()
      .post("/v1/ext/tasks")
      .reply(recordingKey(keys, 429, problem(429, "rate_limited"), { "Retry-After": "7" }))
      .post("/v1/ext/tasks")
      .reply(recordingKey(keys, 201, { task_id: "t1" }));
    await client().tasks.create({ title: "Call", due_at: "2026-01-01T00:00:00Z", assigned_to: "ada" });
    expect(keys[1]).toBe(keys[0]);
    expect(time.sleeps).toEqual([7000]);
  });

  it("waits out 409 idempotency_key_in_use (its own earlier attempt still running) with the same key", async () => {
    const keys: string[] = [];
    api()
      .post("/v1/ext/webhooks")
      .reply(recordingKey(keys, 409, problem(409, "idempotency_key_in_use"), { "Retry-After": "2" }))
      .post("/v1/ext/webhooks")
      .reply(recordingKey(keys, 201, { id: "w1", secret: "whsec_x" }));
    await client().webhooks.subscribe({ target_url: "https://example.com/h", event: "item.created" });
    expect(keys[1]).toBe(keys[0]);
    expect(time.sleeps[0]).toBeGreaterThanOrEqual(2000);
  });

  it("gives up after maxRetries and throws ServerError", async () => {
    api().post("/v1/ext/items").times(3).reply(500, problem(500, "internal"));
    await expect(client({ maxRetries: 2 }).items.create(CREATE_BODY)).rejects.toBeInstanceOf(ServerError);
    expect(time.sleeps).toHaveLength(2);
  });
});

describe("reads", () => {
  it("retry network errors with exponential backoff and jitter", async () => {
    api().get("/v1/ext/items/i1").times(3).replyWithError({ code: "ECONNRESET", message: "socket hang up" });
    api().get("/v1/ext/items/i1").reply(200, item("i1"));
    await expect(client().items.get("i1")).resolves.toMatchObject({ item_id: "i1" });
    expect(time.sleeps).toHaveLength(3);
    const [a, b, c] = time.sleeps as [number, number, number];
    expect(a).toBeGreaterThanOrEqual(250);
    expect(a).toBeLessThan(500);
    expect(b).toBeGreaterThanOrEqual(500);
    expect(b).toBeLessThan(1000);
    expect(c).toBeGreaterThanOrEqual(1000);
    expect(c).toBeLessThan(2000);
  });

  it("jitter the first retry too: no floor makes it constant", () => {
    const waits = [0, 0.5, 0.999].map((r) => backoffMs(0, 0, () => r));
    expect(waits[0]).toBe(250);
    expect(waits[1]).toBe(375);
    expect(waits[2]).toBeCloseTo(499.75);
    expect(backoffMs(10, 0, () => 0)).toBe(MAX_BACKOFF_MS / 2);
  });

  it("end in ConnectionError (with the cause) when every attempt fails", async () => {
    api().get("/v1/ext/me").times(2).replyWithError({ code: "ECONNREFUSED", message: "connect ECONNREFUSED" });
    const err = await client({ maxRetries: 1 }).me().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as ConnectionError).cause).toBeDefined();
  });

  it("retry a 5xx (the duplicate check only reads)", async () => {
    api().post("/v1/ext/items/check-duplicates").reply(502, "bad gateway").post("/v1/ext/items/check-duplicates").reply(200, []);
    await expect(client().items.checkDuplicates({ pipeline_id: "p1", name: "x" })).resolves.toEqual([]);
  });
});

describe("a 5xx or 409 waits its backoff, not the rate-limit window", () => {
  it("a 503 carrying the rate headers every answer has is retried after the backoff, not after RateLimit-Reset", async () => {
    api().get("/v1/ext/items/i1").reply(503, problem(503, "internal"), rateHeaders(50, 45)).get("/v1/ext/items/i1").reply(200, item("i1"));
    await expect(client().items.get("i1")).resolves.toMatchObject({ item_id: "i1" });
    expect(time.sleeps).toHaveLength(1);
    expect(time.sleeps[0]).toBeLessThan(500);
  });

  it("a 409 idempotency_key_in_use with RateLimit-Reset but no Retry-After waits the backoff", async () => {
    api()
      .post("/v1/ext/items")
      .reply(409, problem(409, "idempotency_key_in_use"), rateHeaders(50, 45))
      .post("/v1/ext/items")
      .reply(201, item("1"));
    await client().items.create(CREATE_BODY);
    expect(time.sleeps).toHaveLength(1);
    expect(time.sleeps[0]).toBeLessThan(500);
  });

  it("a Retry-After on a 5xx is honoured up to the longest backoff", async () => {
    api().get("/v1/ext/me").reply(503, problem(503, "internal"), { "Retry-After": "120", ...rateHeaders(50, 45) }).get("/v1/ext/me").reply(200, { company: { id: "c", name: "Acme" } });
    await client().me();
    expect(time.sleeps).toEqual([MAX_BACKOFF_MS]);
  });
});

describe("503 service_unavailable (the server cannot reach its database, CONTRACT \"Errors\")", () => {
  it("a keyed create is retried with the same key after at least Retry-After, until the database is back", async () => {
    const keys: string[] = [];
    const outage = () => recordingKey(keys, 503, problem(503, "service_unavailable"), { "Retry-After": "5" });
    api()
      .post("/v1/ext/items", CREATE_BODY)
      .reply(outage())
      .post("/v1/ext/items", CREATE_BODY)
      .reply(outage())
      .post("/v1/ext/items", CREATE_BODY)
      .reply(recordingKey(keys, 201, item("1")));
    await expect(client().items.create(CREATE_BODY, { idempotencyKey: "row-9" })).resolves.toMatchObject({ item_id: "1" });
    expect(keys).toEqual(["row-9", "row-9", "row-9"]);
    expect(time.sleeps).toHaveLength(2);
    for (const slept of time.sleeps) expect(slept).toBeGreaterThanOrEqual(5_000);
  });

  it("gives up after maxRetries with a ServerError carrying the code and the answer's Retry-After", async () => {
    api().get("/v1/ext/me").times(3).reply(503, problem(503, "service_unavailable"), { "Retry-After": "5" });
    const err = await client({ maxRetries: 2 })
      .me()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect(err).toMatchObject({ status: 503, code: "service_unavailable" });
    expect((err as ServerError).headers.get("retry-after")).toBe("5");
    expect(time.sleeps).toEqual([5_000, 5_000]);
  });
});

describe("the per-attempt timeout", () => {
  it("holds with a custom fetch that ignores the abort signal", async () => {
    const hanging: typeof fetch = () => new Promise<Response>(() => {});
    const err = await new Stageline({ apiKey: API_KEY, baseUrl: ORIGIN, fetch: hanging, timeoutMs: 20, maxRetries: 0 })
      .me()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect(((err as ConnectionError).cause as DOMException).name).toBe("TimeoutError");
  });

  it("covers reading the body: an answer whose body stalls is retried", async () => {
    api().get("/v1/ext/items/i1").delayBody(3000).reply(200, item("late")).get("/v1/ext/items/i1").reply(200, item("i1"));
    await expect(client({ timeoutMs: 100 }).items.get("i1")).resolves.toMatchObject({ item_id: "i1" });
    expect(time.sleeps).toHaveLength(1);
  });
});

describe("nothing else is retried", () => {
  it("an update (no idempotency key) is sent once despite a 5xx", async () => {
    api().patch("/v1/ext/items/i1").once().reply(503, problem(503, "internal"));
    await expect(client().items.update("i1", { name: "x" })).rejects.toBeInstanceOf(ServerError);
    expect(time.sleeps).toEqual([]);
  });

  it("an update is sent once despite a network error", async () => {
    api().patch("/v1/ext/tasks/t1").once().replyWithError({ code: "ECONNRESET", message: "reset" });
    await expect(client().tasks.complete("t1")).rejects.toBeInstanceOf(ConnectionError);
  });

  it("unsubscribe, redeliver and rotate-secret are sent once", async () => {
    api().delete("/v1/ext/webhooks/w1").reply(500).post("/v1/ext/webhooks/w1/deliveries/d1/redeliver").reply(500).post("/v1/ext/webhooks/w1/rotate-secret").reply(500);
    const c = client();
    await expect(c.webhooks.unsubscribe("w1")).rejects.toBeInstanceOf(ServerError);
    await expect(c.webhooks.redeliver("w1", "d1")).rejects.toBeInstanceOf(ServerError);
    await expect(c.webhooks.rotateSecret("w1")).rejects.toBeInstanceOf(ServerError);
  });

  it.each([
    [400, "validation_failed", ValidationError],
    [404, "not_found", NotFoundError],
    [409, "version_conflict", ConflictError],
    [422, "invalid_reference", ValidationError],
  ])("a %i is never retried, not even for a read or a create", async (status, code, type) => {
    api().get("/v1/ext/items/i1").once().reply(status, problem(status, code));
    api().post("/v1/ext/items").once().reply(status, problem(status, code));
    const c = client();
    await expect(c.items.get("i1")).rejects.toBeInstanceOf(type);
    await expect(c.items.create(CREATE_BODY)).rejects.toBeInstanceOf(type);
    expect(time.sleeps).toEqual([]);
  });

  it("maxRetries 0 turns retries off", async () => {
    api().get("/v1/ext/items/i1").once().reply(500);
    await expect(client({ maxRetries: 0 }).items.get("i1")).rejects.toBeInstanceOf(ServerError);
  });
});

/**
 * CONTRACT "Client library": 429 is waited out (Retry-After, else RateLimit-Reset) without counting against
 * maxRetries, until a call has waited maxRateLimitWaitMs in all; concurrent calls of one client share what the
 * server said about the window, so a burst queues instead of failing.
 */
import nock from "nock";
import { RateLimitError } from "../src";
import { api, client, CREATE_BODY, item, problem, rateHeaders, useNock, useVirtualClock } from "./helpers/setup";

useNock();
const time = useVirtualClock();

it("waits Retry-After and retries, without using up maxRetries", async () => {
  api()
    .get("/v1/ext/me")
    .times(5)
    .reply(429, problem(429, "rate_limited"), { "Retry-After": "3", ...rateHeaders(0, 3) })
    .get("/v1/ext/me")
    .reply(200, { company: { id: "c", name: "Acme" } });
  await expect(client({ maxRetries: 1 }).me()).resolves.toMatchObject({ company: { name: "Acme" } });
  expect(time.sleeps).toEqual([3000, 3000, 3000, 3000, 3000]);
});

it("falls back to RateLimit-Reset when there is no Retry-After", async () => {
  api().get("/v1/ext/items/i1").reply(429, problem(429, "rate_limited"), rateHeaders(0, 11)).get("/v1/ext/items/i1").reply(200, item("i1"));
  await client().items.get("i1");
  expect(time.sleeps).toEqual([11000]);
});

it("throws RateLimitError once the call would wait longer than maxRateLimitWaitMs in all", async () => {
  api().get("/v1/ext/items/i1").times(2).reply(429, problem(429, "rate_limited"), { "Retry-After": "40", ...rateHeaders(0, 40) });
  const err = await client({ maxRateLimitWaitMs: 60_000 })
    .items.get("i1")
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(RateLimitError);
  expect(err).toMatchObject({ status: 429, code: "rate_limited", retryAfterSeconds: 40 });
  expect(time.elapsed()).toBe(40_000);
});

it.each([
  ["Retry-After: 0", "0"],
  ["a Retry-After date in the past", "Wed, 21 Oct 2015 07:28:00 GMT"],
])("waits at least 1 s after a 429 with %s, and the waits asked for count against the budget", async (_label, retryAfter) => {
  api().get("/v1/ext/me").times(6).reply(429, problem(429, "rate_limited"), { "Retry-After": retryAfter });
  const err = await client({ maxRateLimitWaitMs: 5_000 })
    .me()
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(RateLimitError);
  expect(time.sleeps).toEqual([1000, 1000, 1000, 1000, 1000]);
});

it("a 429 with Retry-After: 0 then a 200 succeeds after 1 s", async () => {
  api().get("/v1/ext/me").reply(429, problem(429, "rate_limited"), { "Retry-After": "0" }).get("/v1/ext/me").reply(200, { company: { id: "c", name: "Acme" } });
  await expect(client().me()).resolves.toMatchObject({ company: { name: "Acme" } });
  expect(time.sleeps).toEqual([1000]);
});

it("maxRateLimitWaitMs 0 turns the waiting off", async () => {
  api().post("/v1/ext/items").once().reply(429, problem(429, "rate_limited"), { "Retry-After": "1" });
  await expect(client({ maxRateLimitWaitMs: 0 }).items.create(CREATE_BODY)).rejects.toBeInstanceOf(RateLimitError);
});

/**
 * A fake server that allows `limit` requests per 10-second window of the virtual clock and counts every request,
 * 429s included, like the real one. Returns counters of what it answered.
 */
function windowedServer(limit: number): { created: () => number; rejected: () => number } {
  const windowMs = 10_000;
  let windowStart = 0;
  let used = 0;
  let rejected = 0;
  let created = 0;
  const answer = (ok: () => unknown) => (): [number, unknown, Record<string, string>] => {
    const at = time.elapsed();
    if (at - windowStart >= windowMs) {
      windowStart += Math.floor((at - windowStart) / windowMs) * windowMs;
      used = 0;
    }
    used++;
    const reset = Math.ceil((windowStart + windowMs - at) / 1000);
    if (used > limit) {
      rejected++;
      return [429, problem(429, "rate_limited"), { "Retry-After": String(reset), ...rateHeaders(0, reset, limit) }];
    }
    return [201, ok(), rateHeaders(limit - used, reset, limit)];
  };
  api().post("/v1/ext/items").times(100).reply(answer(() => item(String(++created))));
  api().get("/v1/ext/me").times(100).reply(answer(() => ({ company: { id: "c", name: "Acme" } })));
  return { created: () => created, rejected: () => rejected };
}

describe("a burst of concurrent calls of one client", () => {
  afterEach(() => nock.cleanAll()); // the fake server's interceptors allow more requests than a test makes

  it("queues for the window instead of failing: only the first wave, sent before anything was known, meets 429s", async () => {
    const server = windowedServer(3);
    const c = client({ maxRetries: 0 });
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => c.items.create({ ...CREATE_BODY, name: `n${i}` })));
    expect(results).toHaveLength(10);
    expect(server.created()).toBe(10);
    expect(server.rejected()).toBe(7);
  });

  it("meets no 429 at all once the client knows the window", async () => {
    const server = windowedServer(3);
    const c = client({ maxRetries: 0 });
    await c.me();
    await Promise.all(Array.from({ length: 10 }, (_, i) => c.items.create({ ...CREATE_BODY, name: `n${i}` })));
    expect(server.created()).toBe(10);
    expect(server.rejected()).toBe(0);
  });
});

/**
 * Issue 21 part 2, end to end: a script using @stageline/client against a real server (real HTTP, a fresh
 * database: PGlite, or PostgreSQL with TEST_DATABASE_URL) whose per-key limit is 20 requests per window creates 50
 * items in one concurrent burst: exactly 50 exist afterwards and the caller sees no error, because the client
 * queues for the window and retries 429s with the same idempotency key.
 *
 * The window is 5 seconds here (RATE_LIMIT_WINDOW_SECONDS), not the contract's 60: with 20 per 60 s the 53 requests
 * would take three minutes of waiting; the limiter, the headers and the client's logic are the same for any window
 * length, so a 5-second window proves the same thing in about 15 seconds.
 */
import { Stageline } from "../../client/src";
import { loadConfig } from "../../server/src/config/config";
import { startTestServerWithRateLimit, type TestServer } from "../../server/test/helpers/test-server";

const LIMIT = 20;
const WINDOW_SECONDS = 5;
const ITEMS = 50;

describe("RATE_LIMIT_WINDOW_SECONDS", () => {
  it("defaults to the contract's 60 and accepts 1..3600 whole seconds", () => {
    expect(loadConfig({}).rateLimitWindowSeconds).toBe(60);
    expect(loadConfig({ RATE_LIMIT_WINDOW_SECONDS: "5" }).rateLimitWindowSeconds).toBe(5);
    for (const bad of ["0", "1.5", "soon", "3601"]) expect(() => loadConfig({ RATE_LIMIT_WINDOW_SECONDS: bad })).toThrow(/^RATE_LIMIT_WINDOW_SECONDS must be /);
  });
});

describe("a script creating 50 items through the client under a limit of 20 per window", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServerWithRateLimit(LIMIT, { rateLimitWindowSeconds: WINDOW_SECONDS });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("the server counts per window of RATE_LIMIT_WINDOW_SECONDS", async () => {
    const res = await fetch(`${t.url}/v1/ext/me`, { headers: { "x-api-key": t.apiKey } });
    expect(res.headers.get("ratelimit-limit")).toBe(String(LIMIT));
    expect(Number(res.headers.get("ratelimit-reset"))).toBeLessThanOrEqual(WINDOW_SECONDS);
  });

  it("creates exactly 50, the caller sees no error", async () => {
    const statuses: number[] = [];
    const client = new Stageline({
      apiKey: t.apiKey,
      baseUrl: t.url,
      fetch: async (...args) => {
        const res = await fetch(...args);
        statuses.push(res.status);
        return res;
      },
    });
    const started = Date.now();
    const [pipeline] = (await client.pipelines.list()).filter((p) => p.id === t.pipeline.id);
    const [stage] = await client.pipelines.stages(pipeline!.id);
    const created = await Promise.all(
      Array.from({ length: ITEMS }, (_, i) => client.items.create({ name: `client-burst ${i}`, pipeline_id: pipeline!.id, stage_id: stage!.id })),
    );
    const elapsedMs = Date.now() - started;
    expect(new Set(created.map((item) => item.item_id)).size).toBe(ITEMS);

    const stored = [];
    for await (const item of client.items.iterate({ q: "client-burst", limit: 500 })) stored.push(item);
    expect(stored).toHaveLength(ITEMS);
    expect(new Set(stored.map((item) => item.name)).size).toBe(ITEMS);

    // Three windows at most for 52 requests (plus at most one more for a window boundary), and the burst queued:
    // the server answered 429 to no more than the requests that raced the first answers.
    expect(elapsedMs).toBeLessThan((Math.ceil((ITEMS + 3) / LIMIT) + 1) * WINDOW_SECONDS * 1000 + 5_000);
    const rejected = statuses.filter((s) => s === 429).length;
    expect(statuses.filter((s) => s === 201)).toHaveLength(ITEMS);
    expect(rejected).toBeLessThan(LIMIT);
  }, 60_000);
});

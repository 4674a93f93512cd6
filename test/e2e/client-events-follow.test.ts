/**
 * Issue 31, `events.follow` end to end: @stageline/client against a real server (real HTTP, a fresh database: PGlite,
 * or PostgreSQL with TEST_DATABASE_URL). While four writers commit concurrently (three with single creates and
 * updates, one with batches), a follower sees every event exactly once, in the feed's commit order (each item's
 * `item.created` before its `item.updated`, each writer's items in its own order). Its end-to-end lag is a speed
 * figure, measured by the benchmark's `events` phase (bench/lib/events-phase.ts: the same follower settings, 100 ms
 * up to 400 ms, with 4 writers), not asserted here; its waits are unit-tested with a fake clock
 * (client/test/events.test.ts). Then: a follower stopped midway and a second one started from its `cursor` together see the same sequence; an `after` that is not retained is
 * CursorExpiredError; `items.batchAll` over a real server.
 */
import { CursorExpiredError, Stageline, type FeedEvent } from "../../client/src";
import { startTestServerWithRateLimit, type TestServer } from "../../server/test/helpers/test-server";

let t: TestServer;
let client: Stageline;
beforeAll(async () => {
  t = await startTestServerWithRateLimit(100_000);
  client = new Stageline({ apiKey: t.apiKey, baseUrl: t.url });
});
afterAll(async () => {
  await t?.close();
});

const WRITERS = 4;
const PER_WRITER = 20;

/** A create body for the test pipeline. */
const body = (name: string, email: string) => ({ name, pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id, metadata: { email } });

/**
 * Writer `w`: PER_WRITER items, each created then renamed (single requests), or, for the last writer, created in
 * batches of 5 and then renamed in one batch per 5. @returns the item ids in the order it created them.
 */
async function writer(w: number): Promise<string[]> {
  const own = new Stageline({ apiKey: t.apiKey, baseUrl: t.url });
  const ids: string[] = [];
  if (w < WRITERS - 1) {
    for (let i = 0; i < PER_WRITER; i++) {
      const item = await own.items.create(body(`W${w} item ${i}`, `w${w}-${i}@follow.example`));
      ids.push(item.item_id);
      await own.items.update(item.item_id, { name: `W${w} item ${i} (renamed)` });
    }
    return ids;
  }
  for (let i = 0; i < PER_WRITER; i += 5) {
    const created = await own.items.batch(Array.from({ length: 5 }, (_, k) => ({ op: "create" as const, ...body(`W${w} item ${i + k}`, `w${w}-${i + k}@follow.example`) })));
    const batchIds = created.map((r) => r.item!.item_id);
    ids.push(...batchIds);
    await own.items.batch(batchIds.map((item_id, k) => ({ op: "update" as const, item_id, name: `W${w} item ${i + k} (renamed)` })));
  }
  return ids;
}

let anchor: string;
let followed: FeedEvent[] = [];

describe("events.follow against a real server with four concurrent writers", () => {
  it("sees every event exactly once, in commit order", async () => {
    await client.items.create(body("Anchor", "anchor@follow.example"));
    anchor = (await client.events.list({ limit: 1 })).data[0]!.event_id;
    const expected = WRITERS * PER_WRITER * 2;

    const controller = new AbortController();
    const follower = client.events.follow({ after: anchor, signal: controller.signal, minIntervalMs: 100, maxIntervalMs: 400 });
    const consume = (async () => {
      for await (const event of follower) {
        followed.push(event);
        if (followed.length >= expected) break;
      }
    })();
    const created = await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
    const safety = setTimeout(() => controller.abort(), 20_000); // a missed event must fail, not hang
    await consume;
    clearTimeout(safety);

    // exactly once: every item's created and updated event, no id twice
    expect(followed).toHaveLength(expected);
    expect(new Set(followed.map((e) => e.event_id)).size).toBe(expected);
    const allIds = created.flat();
    expect(followed.filter((e) => e.event === "item.created").map((e) => e.resource_id).sort()).toEqual([...allIds].sort());
    expect(followed.filter((e) => e.event === "item.updated").map((e) => e.resource_id).sort()).toEqual([...allIds].sort());
    // in order: the feed's own commit order, item.created before item.updated, each writer's items in its order
    const feed: string[] = [];
    for await (const e of client.events.iterate({ after: anchor })) feed.push(e.event_id);
    expect(followed.map((e) => e.event_id)).toEqual(feed);
    const position = new Map(followed.map((e, i) => [`${e.event}:${e.resource_id}`, i]));
    for (const id of allIds) expect(position.get(`item.created:${id}`)!).toBeLessThan(position.get(`item.updated:${id}`)!);
    for (const ids of created) {
      const order = ids.map((id) => position.get(`item.created:${id}`)!);
      expect(order).toEqual([...order].sort((a, b) => a - b));
    }
    expect(follower.cursor).toBe(followed[followed.length - 1]!.event_id);
  }, 60_000);

  it("resumes from a stopped follower's cursor with the next event, and none twice", async () => {
    const first = client.events.follow({ after: anchor });
    const seen: string[] = [];
    for await (const e of first) {
      seen.push(e.event_id);
      if (seen.length === 37) break;
    }
    const controller = new AbortController();
    const second = client.events.follow({ after: first.cursor!, signal: controller.signal });
    for await (const e of second) {
      seen.push(e.event_id);
      if (seen.length === followed.length) controller.abort();
    }
    expect(seen).toEqual(followed.map((e) => e.event_id));
  });

  it("throws CursorExpiredError for an `after` that is not a retained event", async () => {
    const follower = client.events.follow({ after: "00000000-0000-7000-8000-000000000000" });
    await expect(follower.next()).rejects.toBeInstanceOf(CursorExpiredError);
    await expect(client.events.list({ after: "00000000-0000-7000-8000-000000000000" })).rejects.toMatchObject({ status: 410, code: "cursor_expired" });
  });

  it("batchAll upserts 250 rows in three batches, and running it again with the same key replays them", async () => {
    const ops = Array.from({ length: 250 }, (_, i) => ({ op: "upsert" as const, ref: `r${i}`, ...body(`Bulk ${i}`, `bulk${i}@follow.example`) }));
    const progress: number[] = [];
    const first = await client.items.batchAll(ops, { idempotencyKey: "follow-e2e-bulk", onProgress: (p) => void progress.push(p.done) });
    expect(progress).toEqual([100, 200, 250]);
    expect(first.map((r) => r.status)).toEqual(Array(250).fill(201));
    expect(first.map((r) => r.upsert)).toEqual(Array(250).fill("created"));
    expect(first.map((r) => r.index)).toEqual(ops.map((_, i) => i));
    const again = await client.items.batchAll(ops, { idempotencyKey: "follow-e2e-bulk" });
    expect(again).toEqual(first); // replayed: the same items, still "created"
    const fresh = await client.items.batchAll(ops.slice(0, 3), { idempotencyKey: "follow-e2e-bulk-2" });
    expect(fresh.map((r) => r.upsert)).toEqual(["unchanged", "unchanged", "unchanged"]);
  });
});

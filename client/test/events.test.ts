/**
 * `client.events` (CONTRACT "Events feed"): `list` (newest first with `nextCursor`; with `after`, commit order with
 * `nextAfter`), `iterate` over both orders, `get`, `410 cursor_expired` as CursorExpiredError; and `follow`: pages
 * followed at once while `Link: rel="next"` comes, the doubling idle wait (bounded), resuming from `cursor`, the
 * cursor moved past filtered-out events, transient failures waited out (then thrown), `cursor_expired` thrown, and an
 * abort ending the iteration during a wait or a read. nock plays the server; test/e2e/client-events-follow.test.ts
 * runs `follow` against a real one.
 */
import { clock } from "../src/clock";
import { CursorExpiredError, NotFoundError, ServerError, StagelineError, ValidationError, type EventFollower, type FeedEvent } from "../src";
import { api, client, ORIGIN, problem, useNock, useVirtualClock } from "./helpers/setup";

useNock();
const time = useVirtualClock();

/** A feed event with id `id`. */
function event(id: string, name: FeedEvent["event"] = "item.created"): FeedEvent {
  return { event_id: id, event: name, occurred_at: "2026-03-01T09:30:00.000Z", resource_id: `r-${id}`, data: { item_id: `r-${id}` } };
}

/** A `Link: rel="next"` header to the feed with `params`. */
function next(params: Record<string, string>): Record<string, string> {
  return { Link: `<${ORIGIN}/v1/ext/events?${new URLSearchParams(params)}>; rel="next"` };
}

const PROBLEM = { "Content-Type": "application/problem+json" };

/** Takes `count` events from `follower`, calling `after(i)` after each (e.g. to abort). */
async function take(follower: EventFollower, count: number, after: (i: number) => void = () => {}): Promise<string[]> {
  const ids: string[] = [];
  for await (const e of follower) {
    ids.push(e.event_id);
    after(ids.length);
    if (ids.length === count) break;
  }
  return ids;
}

describe("events.list / iterate / get", () => {
  it("lists newest first with nextCursor, and after an event with nextAfter", async () => {
    api()
      .get("/v1/ext/events")
      .query({ event: "item.created,item.updated", limit: "2" })
      .reply(200, [event("e3"), event("e2")], next({ event: "item.created,item.updated", limit: "2", cursor: "c2" }))
      .get("/v1/ext/events")
      .query({ after: "e1" })
      .reply(200, [event("e2"), event("e3")], next({ after: "e5", limit: "100" }))
      .get("/v1/ext/events")
      .query({ after: "e5" })
      .reply(200, []);
    await expect(client().events.list({ event: "item.created,item.updated", limit: 2 })).resolves.toEqual({ data: [event("e3"), event("e2")], nextCursor: "c2", nextAfter: null });
    await expect(client().events.list({ after: "e1" })).resolves.toEqual({ data: [event("e2"), event("e3")], nextCursor: null, nextAfter: "e5" });
    await expect(client().events.list({ after: "e5" })).resolves.toEqual({ data: [], nextCursor: null, nextAfter: null });
  });

  it("iterates newest first across cursors, and in commit order across `after` links up to the newest event", async () => {
    api()
      .get("/v1/ext/events")
      .query({})
      .reply(200, [event("e4"), event("e3")], next({ cursor: "c3" }))
      .get("/v1/ext/events")
      .query({ cursor: "c3" })
      .reply(200, [event("e2")])
      .get("/v1/ext/events")
      .query({ after: "e1", pipeline_id: "p1" })
      .reply(200, [event("e2")], next({ after: "e3", pipeline_id: "p1" }))
      .get("/v1/ext/events")
      .query({ after: "e3", pipeline_id: "p1" })
      .reply(200, [], next({ after: "e7", pipeline_id: "p1" }))
      .get("/v1/ext/events")
      .query({ after: "e7", pipeline_id: "p1" })
      .reply(200, [event("e8")]);
    const newest: string[] = [];
    for await (const e of client().events.iterate()) newest.push(e.event_id);
    expect(newest).toEqual(["e4", "e3", "e2"]);
    const after: string[] = [];
    for await (const e of client().events.iterate({ after: "e1", pipeline_id: "p1" })) after.push(e.event_id);
    expect(after).toEqual(["e2", "e8"]);
  });

  it("gets one event, 404 as NotFoundError, and refuses a blank id without sending", async () => {
    api().get("/v1/ext/events/e1").reply(200, event("e1")).get("/v1/ext/events/other").reply(404, problem(404, "not_found"), PROBLEM);
    await expect(client().events.get("e1")).resolves.toEqual(event("e1"));
    await expect(client().events.get("other")).rejects.toBeInstanceOf(NotFoundError);
    await expect(client().events.get(" ")).rejects.toBeInstanceOf(TypeError);
  });

  it("throws CursorExpiredError (a StagelineError, 410 cursor_expired) for an `after` no longer retained", async () => {
    api().get("/v1/ext/events").query({ after: "gone" }).reply(410, problem(410, "cursor_expired"), PROBLEM);
    const err = await client()
      .events.list({ after: "gone" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CursorExpiredError);
    expect(err).toBeInstanceOf(StagelineError);
    expect(err).toMatchObject({ status: 410, code: "cursor_expired" });
  });

  it("keeps a 410 of another code a plain StagelineError, and a 400 a ValidationError", async () => {
    api()
      .get("/v1/ext/events")
      .query({ after: "x" })
      .reply(410, problem(410, "payload_erased"), PROBLEM)
      .get("/v1/ext/events")
      .query({ event: "nope" })
      .reply(400, problem(400, "validation_failed", { errors: [{ path: "event", message: "bad" }] }), PROBLEM);
    const erased = await client()
      .events.list({ after: "x" })
      .catch((e: unknown) => e);
    expect(erased).toBeInstanceOf(StagelineError);
    expect(erased).not.toBeInstanceOf(CursorExpiredError);
    await expect(client().events.list({ event: "nope" })).rejects.toBeInstanceOf(ValidationError);
  });
});

describe("events.follow", () => {
  it("follows Link pages at once, then polls with a doubling wait while idle, from the last event on", async () => {
    const controller = new AbortController();
    api()
      .get("/v1/ext/events")
      .query({ after: "e0" })
      .reply(200, [event("e1"), event("e2")], next({ after: "e2" }))
      .get("/v1/ext/events")
      .query({ after: "e2" })
      .reply(200, [event("e3")])
      .get("/v1/ext/events")
      .query({ after: "e3" })
      .times(3)
      .reply(200, [])
      .get("/v1/ext/events")
      .query({ after: "e3" })
      .reply(200, [event("e4")]);
    const follower = client().events.follow({ after: "e0", signal: controller.signal });
    expect(follower.cursor).toBe("e0");
    const ids = await take(follower, 99, (n) => n === 4 && controller.abort());
    expect(ids).toEqual(["e1", "e2", "e3", "e4"]);
    // after e3 (events, no next page): the minimum; then 3 empty polls: 2 s, 4 s, 8 s
    expect(time.sleeps).toEqual([2000, 2000, 4000, 8000]);
    expect(follower.cursor).toBe("e4");
    await expect(follower.next()).resolves.toEqual({ done: true, value: undefined });
  });

  it("caps the idle wait at maxIntervalMs and resets it once events come", async () => {
    const controller = new AbortController();
    api()
      .get("/v1/ext/events")
      .query({ after: "a", event: "task.created" })
      .times(4)
      .reply(200, [])
      .get("/v1/ext/events")
      .query({ after: "a", event: "task.created" })
      .reply(200, [event("b", "task.created")])
      .get("/v1/ext/events")
      .query({ after: "b", event: "task.created" })
      .times(2)
      .reply(200, [])
      .get("/v1/ext/events")
      .query({ after: "b", event: "task.created" })
      .reply(200, [event("c", "task.created")]);
    const follower = client().events.follow({ after: "a", event: "task.created", minIntervalMs: 1000, maxIntervalMs: 3000, signal: controller.signal });
    expect(await take(follower, 99, (n) => n === 2 && controller.abort())).toEqual(["b", "c"]);
    expect(time.sleeps).toEqual([1000, 2000, 3000, 3000, 1000, 1000, 2000]);
  });

  it("resumes from its cursor: a second follow from the first one's cursor continues exactly after the last event taken", async () => {
    api()
      .get("/v1/ext/events")
      .query({ after: "e0" })
      .reply(200, [event("e1"), event("e2"), event("e3")])
      .get("/v1/ext/events")
      .query({ after: "e2" })
      .reply(200, [event("e3")], next({ after: "e3" }))
      .get("/v1/ext/events")
      .query({ after: "e3" })
      .reply(200, [event("e4")]);
    const first = client().events.follow({ after: "e0" });
    expect(await take(first, 2)).toEqual(["e1", "e2"]);
    expect(first.cursor).toBe("e2"); // the page's e3 was not taken: not past it
    const controller = new AbortController();
    const second = client().events.follow({ after: first.cursor!, signal: controller.signal });
    expect(await take(second, 99, (n) => n === 2 && controller.abort())).toEqual(["e3", "e4"]);
    expect(second.cursor).toBe("e4");
  });

  it("moves its cursor past events the filters leave out (an empty page with a next link)", async () => {
    const controller = new AbortController();
    api()
      .get("/v1/ext/events")
      .query({ after: "e0", resource_id: "r1" })
      .reply(200, [], next({ after: "e500", resource_id: "r1" }))
      .get("/v1/ext/events")
      .query({ after: "e500", resource_id: "r1" })
      .reply(200, [event("e501")]);
    const follower = client().events.follow({ after: "e0", resource_id: "r1", signal: controller.signal });
    const first = follower.next();
    expect(await first).toMatchObject({ value: { event_id: "e501" } });
    expect(time.sleeps).toEqual([]);
    controller.abort();
  });

  it("throws CursorExpiredError on 410 cursor_expired, keeping its cursor", async () => {
    api().get("/v1/ext/events").query({ after: "old" }).reply(410, problem(410, "cursor_expired"), PROBLEM);
    const follower = client().events.follow({ after: "old" });
    await expect(follower.next()).rejects.toBeInstanceOf(CursorExpiredError);
    expect(follower.cursor).toBe("old");
  });

  it("waits out transient failures, then throws after five in a row", async () => {
    const controller = new AbortController();
    api()
      .get("/v1/ext/events")
      .query({ after: "e0" })
      .times(2)
      .reply(503, problem(503, "internal"), PROBLEM)
      .get("/v1/ext/events")
      .query({ after: "e0" })
      .reply(200, [event("e1")]);
    const follower = client({ maxRetries: 0 }).events.follow({ after: "e0", signal: controller.signal });
    await expect(follower.next()).resolves.toMatchObject({ value: { event_id: "e1" } });
    expect(time.sleeps).toEqual([2000, 4000]);
    controller.abort();

    api().get("/v1/ext/events").query({ after: "e1" }).times(5).reply(503, problem(503, "internal"), PROBLEM);
    const failing = client({ maxRetries: 0 }).events.follow({ after: "e1" });
    await expect(failing.next()).rejects.toBeInstanceOf(ServerError);
  });

  it("ends at once when aborted during a wait", async () => {
    const controller = new AbortController();
    api().get("/v1/ext/events").query({ after: "e0" }).reply(200, []);
    jest.spyOn(clock, "sleep").mockImplementationOnce(() => {
      controller.abort();
      return new Promise<void>(() => {}); // a wait that would never end by itself
    });
    const follower = client().events.follow({ after: "e0", signal: controller.signal });
    await expect(follower.next()).resolves.toEqual({ done: true, value: undefined });
  });

  it("ends at once when aborted during a read, dropping its answer", async () => {
    const controller = new AbortController();
    api()
      .get("/v1/ext/events")
      .query({ after: "e0" })
      .reply(() => {
        controller.abort();
        return [200, [event("e1")]];
      });
    const follower = client().events.follow({ after: "e0", signal: controller.signal });
    await expect(follower.next()).resolves.toEqual({ done: true, value: undefined });
    expect(follower.cursor).toBe("e0");
    const already = client().events.follow({ after: "e0", signal: controller.signal });
    await expect(already.next()).resolves.toEqual({ done: true, value: undefined });
  });

  it("without `after`, starts after the newest event", async () => {
    const controller = new AbortController();
    api()
      .get("/v1/ext/events")
      .query({ limit: "1" })
      .reply(200, [event("e9")])
      .get("/v1/ext/events")
      .query({ after: "e9", pipeline_id: "p1" })
      .reply(200, [event("e10")]);
    const follower = client().events.follow({ pipeline_id: "p1", signal: controller.signal });
    expect(follower.cursor).toBeNull();
    expect(await take(follower, 1)).toEqual(["e10"]);
    expect(follower.cursor).toBe("e10");
  });

  it("without `after` on a feed with no event yet, waits and then yields every event from the first", async () => {
    const controller = new AbortController();
    api()
      .get("/v1/ext/events")
      .query({ limit: "1" })
      .reply(200, [])
      .get("/v1/ext/events")
      .query({ limit: "1" })
      .reply(200, [event("e3")])
      .get("/v1/ext/events")
      .query({})
      .reply(200, [event("e3"), event("e2")], next({ cursor: "c2" }))
      .get("/v1/ext/events")
      .query({ cursor: "c2" })
      .reply(200, [event("e1")])
      .get("/v1/ext/events")
      .query({ after: "e3" })
      .reply(200, [event("e4")]);
    const follower = client().events.follow({ signal: controller.signal });
    expect(await take(follower, 4)).toEqual(["e1", "e2", "e3", "e4"]);
    expect(time.sleeps).toEqual([2000]);
  });

  it("refuses bad options at the first next()", async () => {
    await expect(client().events.follow({ minIntervalMs: 0 }).next()).rejects.toBeInstanceOf(TypeError);
    await expect(client().events.follow({ minIntervalMs: 5000, maxIntervalMs: 1000 }).next()).rejects.toBeInstanceOf(TypeError);
    await expect(client().events.follow({ after: "" }).next()).rejects.toBeInstanceOf(TypeError);
  });
});

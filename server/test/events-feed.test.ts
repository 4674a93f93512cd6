/**
 * Issue 31, CONTRACT "Events feed (catch up without a public URL)": GET /v1/ext/events (newest first with `cursor`,
 * `after=<event_id>` oldest first in commit order, `410 cursor_expired`, filters, scopes, erased bodies),
 * GET /v1/ext/events/{event_id}, retention keeps events without subscriptions, deliveries' `webhook-id` is the
 * `event_id`, and POST /v1/ext/webhooks/{webhook_id}/replay. On PostgreSQL (TEST_DATABASE_URL) also: two concurrent
 * transactions writing events for one company, the first to take its seq committing last, never make a consumer
 * following `after` skip an event (db/outbox.ts `eventOrderLockCte`), while the same race with the lock left out does
 * skip one (the control); item, task and note writes wait for a held event-order lock of their company; and two
 * server processes on one schema with four concurrent writers and a consumer following `after` across both: every
 * event seen exactly once, in seq order, which is each subscription's delivery order (issue 31 item 2). Note events (issue 30) are read with `items:read` and filtered by `pipeline_id`
 * through their item's pipeline.
 */
import { EVENT_NAMES } from "@stageline/shared";
import type { Prisma } from "../src/generated/prisma/client";
import { readFeed } from "../src/db/events-feed";
import { insertEvent, lockEventOrder } from "../src/db/outbox";
import { requeueRange } from "../src/db/webhook-deliveries-log";
import { purgeWebhookLog } from "../src/webhooks/retention";
import { useProcessPair } from "./helpers/process-pair";
import { startReceiver, waitUntil, type Receiver, type ReceivedRequest } from "./helpers/receiver";
import { apiClient, type ApiResponse } from "./helpers/server-process";
import { createSalesPipeline, startTestServer, type TestPipeline, type TestServer } from "./helpers/test-server";

let t: TestServer;
let receiver: Receiver;
let support: TestPipeline;

beforeAll(async () => {
  t = await startTestServer();
  support = await createSalesPipeline(t.server, t.companyId, "Support");
  receiver = await startReceiver();
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

// A fresh key per test keeps each far below the per-key rate limit.
let key: string;
beforeEach(async () => {
  key = (await t.newKey()).key;
});

const createItem = async (pipeline: TestPipeline = t.pipeline, name = "Deal") => {
  const res = await t.request("POST", "/v1/ext/items", { name, pipeline_id: pipeline.id, stage_id: pipeline.stages[0]!.id }, key);
  expect(res.status).toBe(201);
  return res.body as { item_id: string; version: number };
};
const createTask = async (extra: Record<string, unknown> = {}) => {
  const res = await t.request("POST", "/v1/ext/tasks", { title: "Call", due_at: "2026-03-01T09:30:00Z", assigned_to: "ada", ...extra }, key);
  expect(res.status).toBe(201);
  return res.body as { task_id: string };
};
const feed = (query = "", as = key) => t.request("GET", `/v1/ext/events${query}`, undefined, as);
/** The `next` URL of a response's `Link` header, as a path with query, or null. */
const nextOf = (res: { headers: Headers }): string | null => {
  const link = res.headers.get("link");
  const m = link && /<([^>]+)>;\s*rel="next"/.exec(link);
  if (!m) return null;
  const url = new URL(m[1]!);
  return url.pathname + url.search;
};
/** The newest event of the company (any name), as a starting point for `after`. */
const newestEventId = async (): Promise<string> => {
  const res = await feed("?limit=1");
  expect(res.status).toBe(200);
  return res.body[0].event_id as string;
};
/** Follows `after` from `start` through every `Link`, returning every event seen. */
const follow = async (start: string, extra = "", as = key) => {
  const seen: { event_id: string; event: string; resource_id: string; data: any }[] = [];
  let path: string | null = `/v1/ext/events?after=${start}${extra}`;
  while (path) {
    const res = await t.request("GET", path, undefined, as);
    expect(res.status).toBe(200);
    seen.push(...res.body);
    path = nextOf(res);
  }
  return seen;
};

describe("retention keeps every event, subscribed or not", () => {
  it("an event nobody subscribes to is stored and kept until WEBHOOK_RETENTION_DAYS, then purged", async () => {
    const subs = await t.server.ctx.prisma.webhookSubscription.count({ where: { companyId: t.companyId } });
    expect(subs).toBe(0);
    const item = await createItem();
    const stored = await t.server.ctx.prisma.webhookEvent.findFirst({ where: { companyId: t.companyId, resourceId: item.item_id } });
    expect(stored?.type).toBe("item.created");
    const policy = { retentionDays: t.server.ctx.config.webhookRetentionDays, batchSize: 100, intervalMs: 60_000 };
    // A purge run now, and one a day before the period ends, keep it.
    await purgeWebhookLog(t.server.ctx.prisma, policy, new Date());
    await purgeWebhookLog(t.server.ctx.prisma, policy, new Date(Date.now() + (policy.retentionDays - 1) * 86_400_000));
    expect(await t.server.ctx.prisma.webhookEvent.count({ where: { id: stored!.id } })).toBe(1);
    const res = await t.request("GET", `/v1/ext/events/${stored!.id}`, undefined, key);
    expect(res.status).toBe(200);
    // Once older than the period it goes, and following the feed from it is 410 cursor_expired.
    await purgeWebhookLog(t.server.ctx.prisma, policy, new Date(Date.now() + (policy.retentionDays + 1) * 86_400_000));
    expect(await t.server.ctx.prisma.webhookEvent.count({ where: { id: stored!.id } })).toBe(0);
    const gone = await feed(`?after=${stored!.id}`);
    expect(gone.status).toBe(410);
    expect(gone.body.code).toBe("cursor_expired");
  });
});

describe("GET /v1/ext/events", () => {
  it("lists events newest first with data equal to the delivery body, and pages with cursor", async () => {
    const a = await createItem(t.pipeline, "First");
    const patched = await t.request("PATCH", `/v1/ext/items/${a.item_id}`, { name: "First renamed" }, key);
    expect(patched.status).toBe(200);
    const task = await createTask({ item_id: a.item_id });
    const page = await feed("?limit=3");
    expect(page.status).toBe(200);
    expect(page.body.map((e: any) => e.event)).toEqual(["task.created", "item.updated", "item.created"]);
    const [taskEvent, updated, created] = page.body;
    expect(taskEvent.resource_id).toBe(task.task_id);
    expect(created.resource_id).toBe(a.item_id);
    // data is exactly the stored delivery body (what the dispatcher sends), key order included.
    for (const e of page.body) {
      const stored = await t.server.ctx.prisma.webhookEvent.findUniqueOrThrow({ where: { id: e.event_id } });
      expect(JSON.stringify(e.data)).toBe(JSON.stringify(stored.payload));
      expect(e.occurred_at).toBe(stored.createdAt.toISOString());
    }
    expect(updated.data.changed_fields).toEqual(["name"]);
    expect(updated.data.name).toBe("First renamed");
    expect(created.data.name).toBe("First");
    // Keyset pages: the next page continues strictly after the last event, no overlap.
    const two = await feed("?limit=2");
    const next = nextOf(two);
    expect(next).toContain("cursor=");
    const second = await t.request("GET", next!.replace("limit=2", "limit=1"), undefined, key);
    expect(second.status).toBe(200);
    expect([...two.body, ...second.body].map((e: any) => e.event_id)).toEqual(page.body.map((e: any) => e.event_id));
  });

  it("after=<event_id>: the events after it, oldest first, followed through Link to the end", async () => {
    const start = await newestEventId();
    const items = [];
    for (let i = 0; i < 5; i++) items.push(await createItem(t.pipeline, `Seq ${i}`));
    const first = await feed(`?after=${start}&limit=2`);
    expect(first.status).toBe(200);
    expect(first.body.map((e: any) => e.data.name)).toEqual(["Seq 0", "Seq 1"]);
    expect(nextOf(first)).toContain(`after=${first.body[1].event_id}`);
    const all = await follow(start, "&limit=2");
    expect(all.map((e) => e.resource_id)).toEqual(items.map((i) => i.item_id));
    // At the end: an empty page without Link; the consumer polls again with the last event_id.
    const end = await feed(`?after=${all[all.length - 1]!.event_id}`);
    expect(end.status).toBe(200);
    expect(end.body).toEqual([]);
    expect(nextOf(end)).toBeNull();
  });

  it("410 cursor_expired for an after that was never this company's; 400 for bad cursors and unknown names", async () => {
    const other = await t.newCompany("Other Co");
    const otherItem = await t.request("POST", "/v1/ext/items", { name: "Theirs", pipeline_id: other.pipeline.id, stage_id: other.pipeline.stages[0]!.id }, other.apiKey);
    expect(otherItem.status).toBe(201);
    const theirEvent = (await feed("?limit=1", other.apiKey)).body[0].event_id;
    for (const after of [theirEvent, "0193aaaa-0000-7000-8000-000000000000", "not-an-id"]) {
      const res = await feed(`?after=${encodeURIComponent(after)}`);
      expect(res.status).toBe(410);
      expect(res.body.code).toBe("cursor_expired");
    }
    // Another company's event is 404 by id, and never in this company's feed.
    expect((await t.request("GET", `/v1/ext/events/${theirEvent}`, undefined, key)).status).toBe(404);
    expect((await feed("?limit=500")).body.some((e: any) => e.event_id === theirEvent)).toBe(false);
    const badCursor = await feed("?cursor=abc");
    expect(badCursor.status).toBe(400);
    expect(badCursor.body.code).toBe("validation_failed");
    const forged = await feed(`?cursor=${Buffer.from(JSON.stringify(["seq", "-1"])).toString("base64url")}`);
    expect(forged.status).toBe(400);
    const both = await feed(`?after=${await newestEventId()}&cursor=${Buffer.from(JSON.stringify(["seq", "5"])).toString("base64url")}`);
    expect(both.status).toBe(400);
    const unknown = await feed("?event=item.created,item.exploded");
    expect(unknown.status).toBe(400);
    expect(unknown.body.code).toBe("validation_failed");
    for (const name of EVENT_NAMES) expect(JSON.stringify(unknown.body)).toContain(name);
    expect((await feed("?limit=0")).status).toBe(400);
    expect((await feed("?limit=501")).status).toBe(400);
  });

  it("filters: event (comma-separated), resource_id, pipeline_id (item events by their pipeline, task events by their item's)", async () => {
    const start = await newestEventId();
    const sales = await createItem(t.pipeline, "In sales");
    const supportItem = await createItem(support, "In support");
    await t.request("PATCH", `/v1/ext/items/${supportItem.item_id}`, { name: "In support, renamed" }, key);
    const linked = await createTask({ item_id: supportItem.item_id });
    const unlinked = await createTask();
    const names = await follow(start, "&event=item.created,task.created");
    expect(names.map((e) => e.event)).toEqual(["item.created", "item.created", "task.created", "task.created"]);
    const byResource = await follow(start, `&resource_id=${supportItem.item_id}`);
    expect(byResource.map((e) => e.event)).toEqual(["item.created", "item.updated"]);
    const newestByResource = await feed(`?resource_id=${supportItem.item_id}&limit=1`);
    expect(newestByResource.body.map((e: any) => e.event)).toEqual(["item.updated"]);
    const inSupport = await follow(start, `&pipeline_id=${support.id}`);
    expect(inSupport.map((e) => e.resource_id)).toEqual([supportItem.item_id, supportItem.item_id, linked.task_id]);
    expect(inSupport.some((e) => e.resource_id === unlinked.task_id || e.resource_id === sales.item_id)).toBe(false);
    const combined = await follow(start, `&pipeline_id=${support.id}&event=task.created`);
    expect(combined.map((e) => e.resource_id)).toEqual([linked.task_id]);
    // An unknown pipeline or resource matches nothing (an empty array, not 404).
    expect((await feed("?pipeline_id=nope")).body).toEqual([]);
    expect((await feed("?resource_id=nope")).body).toEqual([]);
  });

  it("scopes: items:read sees item events, tasks:read task events, neither is 403; an unreadable event is 404", async () => {
    const start = await newestEventId();
    const item = await createItem();
    const task = await createTask({ item_id: item.item_id });
    const itemsKey = (await t.newKey(["items:read"])).key;
    const tasksKey = (await t.newKey(["tasks:read"])).key;
    const hooksKey = (await t.newKey(["hooks:manage", "items:write", "tasks:write"])).key;
    expect((await follow(start, "", itemsKey)).map((e) => e.event)).toEqual(["item.created"]);
    expect((await follow(start, "", tasksKey)).map((e) => e.event)).toEqual(["task.created"]);
    expect((await follow(start, "&event=task.created", itemsKey))).toEqual([]);
    const forbidden = await feed("", hooksKey);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.code).toBe("insufficient_scope");
    const taskEventId = (await follow(start, "", tasksKey))[0]!.event_id;
    expect((await t.request("GET", `/v1/ext/events/${taskEventId}`, undefined, itemsKey)).status).toBe(404);
    const one = await t.request("GET", `/v1/ext/events/${taskEventId}`, undefined, tasksKey);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ event_id: taskEventId, event: "task.created", resource_id: task.task_id });
    expect((await t.request("GET", `/v1/ext/events/${taskEventId}`, undefined, hooksKey)).status).toBe(403);
  });

  it("note events: items:read reads them (tasks:read does not), pipeline_id filters them by their item's pipeline, an erased one never matches", async () => {
    const start = await newestEventId();
    const salesItem = await createItem(t.pipeline, "Sales, with a note");
    const supportItem = await createItem(support, "Support, with notes");
    const createNote = async (itemId: string, body: string) => {
      const res = await t.request("POST", "/v1/ext/notes", { item_id: itemId, body }, key);
      expect(res.status).toBe(201);
      return res.body as { note_id: string; version: number };
    };
    const salesNote = await createNote(salesItem.item_id, "Sales note");
    const supportNote = await createNote(supportItem.item_id, "Support note");
    expect((await t.request("PATCH", `/v1/ext/notes/${supportNote.note_id}`, { pinned: true, version: supportNote.version }, key)).status).toBe(200);
    const doomedNote = await createNote(supportItem.item_id, "Forget this note");
    expect((await t.request("DELETE", `/v1/ext/notes/${doomedNote.note_id}`, undefined, key)).status).toBe(204);

    const itemsKey = (await t.newKey(["items:read"])).key;
    const tasksKey = (await t.newKey(["tasks:read"])).key;
    const all = await follow(start, "", itemsKey);
    expect(all.map((e) => `${e.event} ${e.resource_id}`)).toEqual([
      `item.created ${salesItem.item_id}`,
      `item.created ${supportItem.item_id}`,
      `note.created ${salesNote.note_id}`,
      `note.created ${supportNote.note_id}`,
      `note.updated ${supportNote.note_id}`,
      `note.created ${doomedNote.note_id}`,
      `note.deleted ${doomedNote.note_id}`,
    ]);
    expect(all[3]!.data).toMatchObject({ note_id: supportNote.note_id, item_id: supportItem.item_id, body: "Support note" });
    // The deleted note's events are erased (no subscription: its note.deleted too), keeping only ids.
    for (const e of all.slice(5)) expect(e.data).toEqual({ note_id: doomedNote.note_id, item_id: supportItem.item_id, erased: true });
    expect(JSON.stringify(all)).not.toContain("Forget this note");
    expect(await follow(start, "", tasksKey)).toEqual([]);
    const noteEventId = all[2]!.event_id;
    expect((await t.request("GET", `/v1/ext/events/${noteEventId}`, undefined, tasksKey)).status).toBe(404);
    const one = await t.request("GET", `/v1/ext/events/${noteEventId}`, undefined, itemsKey);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ event_id: noteEventId, event: "note.created", resource_id: salesNote.note_id });

    // pipeline_id: a note event goes by its item's pipeline; the erased events of the deleted note match none.
    const inSupport = await follow(start, `&pipeline_id=${support.id}`, itemsKey);
    expect(inSupport.map((e) => `${e.event} ${e.resource_id}`)).toEqual([
      `item.created ${supportItem.item_id}`,
      `note.created ${supportNote.note_id}`,
      `note.updated ${supportNote.note_id}`,
    ]);
    const inSales = await follow(start, `&pipeline_id=${t.pipeline.id}&event=note.created,note.updated,note.deleted`, itemsKey);
    expect(inSales.map((e) => e.resource_id)).toEqual([salesNote.note_id]);
    expect((await follow(start, `&resource_id=${supportNote.note_id}`, itemsKey)).map((e) => e.event)).toEqual(["note.created", "note.updated"]);
    // Newest first with the filter as well.
    const newest = await feed(`?pipeline_id=${support.id}&limit=1`, itemsKey);
    expect(newest.body.map((e: any) => `${e.event} ${e.resource_id}`)).toEqual([`note.updated ${supportNote.note_id}`]);
  });

  it("an erased event shows the erased body, in the list and by id", async () => {
    const start = await newestEventId();
    const item = await createItem(t.pipeline, "Forget me");
    const del = await t.request("DELETE", `/v1/ext/items/${item.item_id}`, undefined, key);
    expect(del.status).toBe(204);
    const events = await follow(start);
    expect(events.map((e) => e.event)).toEqual(["item.created", "item.deleted"]);
    for (const e of events) {
      expect(e.data).toEqual({ item_id: item.item_id, erased: true });
      const one = await t.request("GET", `/v1/ext/events/${e.event_id}`, undefined, key);
      expect(one.body.data).toEqual({ item_id: item.item_id, erased: true });
    }
    expect(JSON.stringify(events)).not.toContain("Forget me");
  });

  it("a read examines a bounded number of events: a filter matching little returns a short page and where to go on", async () => {
    const start = await newestEventId();
    for (let i = 0; i < 4; i++) await createItem(t.pipeline, `Bulk ${i}`);
    const task = await createTask();
    const startSeq = (await t.server.ctx.prisma.webhookEvent.findUniqueOrThrow({ where: { id: start } })).seq;
    const base = { direction: "asc" as const, types: ["task.created"], resourceId: null, pipelineId: null, limit: 1 };
    const cut = await readFeed(t.server.ctx.prisma, t.companyId, { ...base, from: startSeq, scan: 3 });
    expect(cut.rows).toEqual([]);
    expect(cut.more).toBe(true);
    const rest = await readFeed(t.server.ctx.prisma, t.companyId, { ...base, from: cut.lastExamined!.seq, scan: 3 });
    expect(rest.rows.map((r) => r.resourceId)).toEqual([task.task_id]);
  });
});

describe("deliveries and the feed", () => {
  it("a delivery's webhook-id is its event's event_id", async () => {
    const sub = await t.request("POST", "/v1/ext/webhooks", { target_url: `${receiver.url}/webhook-id`, event: "item.created" }, key);
    expect(sub.status).toBe(201);
    const item = await createItem(t.pipeline, "Hooked");
    await receiver.waitFor(() => receiver.accepted("/webhook-id").length >= 1, "the delivery");
    const delivered = receiver.accepted("/webhook-id")[0]!;
    const event = (await feed(`?resource_id=${item.item_id}`)).body[0];
    expect(delivered.headers["webhook-id"]).toBe(event.event_id);
    expect(JSON.parse(delivered.body.toString("utf8"))).toEqual(event.data);
    await t.request("DELETE", `/v1/ext/webhooks/${sub.body.id}`, undefined, key);
  });

  it("POST /webhooks/{id}/replay queues again the failed deliveries of a range, capped, company-scoped", async () => {
    let failing = true;
    receiver.respondWith((req) => (req.path === "/replay" ? { status: failing ? 400 : 200 } : undefined));
    const sub = await t.request("POST", "/v1/ext/webhooks", { target_url: `${receiver.url}/replay`, event: "item.created" }, key);
    expect(sub.status).toBe(201);
    const id = sub.body.id as string;
    const since = new Date(Date.now() - 1000).toISOString();
    for (let i = 0; i < 3; i++) await createItem(t.pipeline, `Replay ${i}`);
    const states = async () => (await t.request("GET", `/v1/ext/webhooks/${id}/deliveries`, undefined, key)).body.map((d: any) => d.state);
    await waitUntil(async () => (await states()).filter((s: string) => s === "failed").length === 3, "three failed deliveries");
    failing = false;
    const bodyErrors = await t.request("POST", `/v1/ext/webhooks/${id}/replay`, { since, until: since }, key);
    expect(bodyErrors.status).toBe(400);
    expect((await t.request("POST", `/v1/ext/webhooks/${id}/replay`, { since: "yesterday" }, key)).status).toBe(400);
    expect((await t.request("POST", `/v1/ext/webhooks/${id}/replay`, { since, extra: 1 }, key)).status).toBe(400);
    // A range before the deliveries replays nothing.
    const empty = await t.request("POST", `/v1/ext/webhooks/${id}/replay`, { since: "2020-01-01T00:00:00Z", until: "2020-01-02T00:00:00Z" }, key);
    expect(empty.status).toBe(202);
    expect(empty.body).toEqual({ count: 0 });
    // The cap: a call queues at most `cap` (MAX_REPLAY_DELIVERIES through the API), the oldest first; the next call
    // takes the rest (the queued ones are pending, not picked again).
    const now = new Date();
    expect(await requeueRange(t.server.ctx.prisma, id, { since: new Date(since), until: now, states: ["failed"], cap: 2 }, now)).toBe(2);
    const replayed = await t.request("POST", `/v1/ext/webhooks/${id}/replay`, { since }, key);
    expect(replayed.status).toBe(202);
    expect(replayed.body).toEqual({ count: 1 });
    await waitUntil(async () => (await states()).every((s: string) => s === "succeeded"), "three replayed deliveries delivered");
    // The replayed deliveries keep their webhook-id: one per event, each the event's id.
    const accepted = receiver.accepted("/replay").map((r) => r.headers["webhook-id"]);
    const events = (await feed("?event=item.created&limit=50")).body.filter((e: any) => e.data.name?.startsWith("Replay")) as { event_id: string }[];
    expect(events).toHaveLength(3);
    expect(new Set(accepted)).toEqual(new Set(events.map((e) => e.event_id)));
    // Nothing failed is left: only_failed (default) replays nothing; only_failed false replays the delivered ones.
    expect((await t.request("POST", `/v1/ext/webhooks/${id}/replay`, { since }, key)).body).toEqual({ count: 0 });
    expect((await t.request("POST", `/v1/ext/webhooks/${id}/replay`, { since, only_failed: false }, key)).body).toEqual({ count: 3 });
    // Another company's webhook is 404; a key without hooks:manage is 403; an unknown id is 404.
    const other = await t.newCompany("Replay Other");
    expect((await t.request("POST", `/v1/ext/webhooks/${id}/replay`, { since }, other.apiKey)).status).toBe(404);
    expect((await t.request("POST", `/v1/ext/webhooks/${id}/replay`, { since }, (await t.newKey(["items:read"])).key)).status).toBe(403);
    expect((await t.request("POST", `/v1/ext/webhooks/nope/replay`, { since }, key)).status).toBe(404);
    await waitUntil(async () => (await states()).every((s: string) => s === "succeeded"), "the second replay delivered");
    await t.request("DELETE", `/v1/ext/webhooks/${id}`, undefined, key);
  });

  it("replay skips erased deliveries", async () => {
    receiver.respondWith((req) => (req.path === "/erased" ? { status: 400 } : undefined));
    const sub = await t.request("POST", "/v1/ext/webhooks", { target_url: `${receiver.url}/erased`, event: "item.created" }, key);
    const id = sub.body.id as string;
    const since = new Date(Date.now() - 1000).toISOString();
    const item = await createItem(t.pipeline, "Erase then replay");
    const states = async () => (await t.request("GET", `/v1/ext/webhooks/${id}/deliveries`, undefined, key)).body.map((d: any) => d.state);
    await waitUntil(async () => (await states()).includes("failed"), "the failed delivery");
    expect((await t.request("DELETE", `/v1/ext/items/${item.item_id}`, undefined, key)).status).toBe(204);
    const replayed = await t.request("POST", `/v1/ext/webhooks/${id}/replay`, { since, only_failed: false }, key);
    expect(replayed.status).toBe(202);
    expect(replayed.body).toEqual({ count: 0 });
    await t.request("DELETE", `/v1/ext/webhooks/${id}`, undefined, key);
  });
});

if (process.env.TEST_DATABASE_URL) {
  /**
   * Runs `first` in a transaction of its own connection and keeps that transaction open until `release()`.
   * @returns once `first` is done: its value, `release`, and `committed` (settles after the commit).
   */
  const openTransaction = async <T>(first: (tx: Prisma.TransactionClient) => Promise<T>) => {
    let release!: () => void;
    const hold = new Promise<void>((resolve) => (release = resolve));
    let ready!: (value: T) => void;
    const value = new Promise<T>((resolve) => (ready = resolve));
    const committed = t.server.ctx.prisma.$transaction(
      async (tx) => {
        ready(await first(tx));
        await hold;
      },
      { timeout: 30_000, maxWait: 10_000 },
    );
    return { value: await value, release, committed };
  };

  describe("commit order on PostgreSQL", () => {
    it("the transaction that takes the first seq commits last: a consumer following after skips nothing", async () => {
      await createItem(t.pipeline, "Before the race");
      const start = await newestEventId();
      const write = (name: string) => ({ companyId: t.companyId, type: "item.created", resourceId: name, payload: { item_id: name, name } });
      // A inserts its event (taking its seq), then stays open; B inserts after A did and commits at once.
      const a = await openTransaction((tx) => insertEvent(tx, write("A")));
      let bDone = false;
      const b = t.server.ctx.prisma
        .$transaction(async (tx) => insertEvent(tx, write("B")), { timeout: 30_000, maxWait: 10_000 })
        .then((row) => {
          bDone = true;
          return row;
        });
      // A consumer follows the feed while A is open: with seq drawn at insert and no lock, it would see B here,
      // move its cursor past A's seq, and never see A.
      const seen: string[] = [];
      let cursor = start;
      const poll = async () => {
        for (;;) {
          const res = await feed(`?after=${cursor}`);
          expect(res.status).toBe(200);
          for (const e of res.body) seen.push(e.resource_id);
          if (res.body.length > 0) cursor = res.body[res.body.length - 1].event_id;
          if (!nextOf(res)) return;
        }
      };
      for (let i = 0; i < 5; i++) {
        await poll();
        await new Promise((r) => setTimeout(r, 60));
      }
      const bCommittedWhileAOpen = bDone;
      a.release();
      await a.committed;
      const rowB = await b;
      await poll();
      // Every event exactly once, in commit order (without the lock: ["B"], A skipped for good: the next test).
      expect(seen).toEqual(["A", "B"]);
      expect(a.value.seq < rowB.seq).toBe(true);
      expect(bCommittedWhileAOpen).toBe(false); // B waited for A's commit (the company's event-order lock)
    });

    it("without the event-order lock the same race skips A for good: a seq drawn at insert is not commit order", async () => {
      // The control of the test above: the same two transactions insert their events with the lock left out (a
      // plain insert, as every write did before issue 31), so the test above would fail without the lock.
      await createItem(t.pipeline, "Before the unlocked race");
      const start = await newestEventId();
      const write = (name: string) => ({ companyId: t.companyId, type: "item.created", resourceId: name, payload: { item_id: name, name } });
      const a = await openTransaction((tx) => tx.webhookEvent.create({ data: write("unlocked A"), select: { id: true, seq: true } }));
      const rowB = await t.server.ctx.prisma.$transaction((tx) => tx.webhookEvent.create({ data: write("unlocked B"), select: { id: true, seq: true } }));
      // B committed while A is open (nothing made it wait); the consumer sees B and moves its cursor past A's seq.
      const first = await feed(`?after=${start}`);
      expect(first.body.map((e: any) => e.resource_id)).toEqual(["unlocked B"]);
      a.release();
      await a.committed;
      expect(a.value.seq < rowB.seq).toBe(true);
      expect(await t.server.ctx.prisma.webhookEvent.count({ where: { id: a.value.id } })).toBe(1);
      // A is committed and retained, yet following on from B never returns it: skipped.
      const next = await feed(`?after=${first.body[0].event_id}`);
      expect(next.status).toBe(200);
      expect(next.body).toEqual([]);
      // Clean up, so no later test reading this company's feed meets these fixture rows.
      await t.server.ctx.prisma.webhookEvent.deleteMany({ where: { id: { in: [a.value.id, rowB.id] } } });
    });

    it("every API write that emits events takes the company's event-order lock before its seq", async () => {
      const existing = await createItem(t.pipeline, "To patch");
      const doomed = await createItem(t.pipeline, "To delete");
      const held = await openTransaction((tx) => lockEventOrder(tx, t.companyId));
      const finished: string[] = [];
      const track = (name: string, p: Promise<{ status: number }>) => p.then((res) => (finished.push(name), res.status));
      const writes = Promise.all([
        track("create item", t.request("POST", "/v1/ext/items", { name: "Waits", pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id }, key)),
        track("patch item", t.request("PATCH", `/v1/ext/items/${existing.item_id}`, { name: "Patched" }, key)),
        track("delete item", t.request("DELETE", `/v1/ext/items/${doomed.item_id}`, undefined, key)),
        track("create task", t.request("POST", "/v1/ext/tasks", { title: "Waits", due_at: "2026-03-01T09:30:00Z", assigned_to: "ada" }, key)),
      ]);
      await new Promise((r) => setTimeout(r, 500));
      expect(finished).toEqual([]);
      held.release();
      await held.committed;
      expect(await writes).toEqual([201, 200, 204, 201]);
    });

    it("every note write (create, update, delete) waits for a held event-order lock of its company", async () => {
      const item = await createItem(t.pipeline, "Notes wait");
      const note = async (body: string) => {
        const res = await t.request("POST", "/v1/ext/notes", { item_id: item.item_id, body }, key);
        expect(res.status).toBe(201);
        return res.body as { note_id: string; version: number };
      };
      const toPatch = await note("To patch");
      const toDelete = await note("To delete");
      const held = await openTransaction((tx) => lockEventOrder(tx, t.companyId));
      const finished: string[] = [];
      const track = (name: string, p: Promise<{ status: number }>) => p.then((res) => (finished.push(name), res.status));
      const writes = Promise.all([
        track("create note", t.request("POST", "/v1/ext/notes", { item_id: item.item_id, body: "Waits" }, key)),
        track("patch note", t.request("PATCH", `/v1/ext/notes/${toPatch.note_id}`, { pinned: true, version: toPatch.version }, key)),
        track("delete note", t.request("DELETE", `/v1/ext/notes/${toDelete.note_id}`, undefined, key)),
      ]);
      await new Promise((r) => setTimeout(r, 500));
      expect(finished).toEqual([]);
      // Nothing of theirs is visible while they wait (each writes its row and its event in one statement).
      expect(await t.server.ctx.prisma.note.count({ where: { itemId: item.item_id, body: "Waits" } })).toBe(0);
      held.release();
      await held.committed;
      expect(await writes).toEqual([201, 200, 204]);
      const events = await t.server.ctx.prisma.webhookEvent.findMany({
        where: { companyId: t.companyId, resourceId: { in: [toPatch.note_id, toDelete.note_id] }, type: { in: ["note.updated", "note.deleted"] } },
      });
      expect(events.map((e) => e.type).sort()).toEqual(["note.deleted", "note.updated"]);
    });

    it("another company's events do not wait for the lock", async () => {
      const other = await t.newCompany("Unblocked");
      const held = await openTransaction((tx) =>
        insertEvent(tx, { companyId: t.companyId, type: "item.created", resourceId: "held", payload: { item_id: "held" } }),
      );
      const created = await t.request("POST", "/v1/ext/items", { name: "Not blocked", pipeline_id: other.pipeline.id, stage_id: other.pipeline.stages[0]!.id }, other.apiKey);
      expect(created.status).toBe(201);
      held.release();
      await held.committed;
    });
  });

  /**
   * Issue 31 item 2 on the deployment it is about: two server processes on one PostgreSQL schema, four writers
   * committing concurrently through both (item creates and updates, task creates and updates, note creates and
   * updates), and a consumer following `after` through both processes while they write. The consumer must end with
   * exactly the company's stored events after its start, each once, in `seq` order (commit order within the company,
   * db/outbox.ts `eventOrderLockCte`), which is also the order each subscription's deliveries arrive in.
   */
  describe("four writers on two server processes, one consumer following after across both", () => {
    const pair = useProcessPair();
    const SUBSCRIBED = ["item.created", "item.updated", "task.created", "task.updated", "note.created", "note.updated"] as const;
    const WRITERS = 4;
    const ROUNDS = 6;

    it("sees every event exactly once, in seq order and in each subscription's delivery order; none skipped", async () => {
      const calls = [apiClient(pair.a.url, pair.apiKey), apiClient(pair.b.url, pair.apiKey)];
      const ok = async (res: Promise<ApiResponse>, status: number, what: string) => {
        const r = await res;
        if (r.status !== status) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
        return r.body;
      };
      const pipelineId = (await ok(calls[0]!("GET", "/v1/ext/pipelines"), 200, "pipelines"))[0].id as string;
      const stageId = (await ok(calls[0]!("GET", `/v1/ext/pipelines/${pipelineId}/stages`), 200, "stages"))[0].id as string;
      const prefix = `/two-proc-${Date.now()}`;
      for (const event of SUBSCRIBED) {
        await ok(calls[0]!("POST", "/v1/ext/webhooks", { target_url: `${receiver.url}${prefix}/${event}`, event }), 201, `subscribe ${event}`);
      }
      await ok(calls[1]!("POST", "/v1/ext/items", { name: "Before the writers", pipeline_id: pipelineId, stage_id: stageId }), 201, "first item");
      const start = (await ok(calls[1]!("GET", "/v1/ext/events?limit=1"), 200, "newest event"))[0].event_id as string;

      type Seen = { event_id: string; event: string; resource_id: string };
      /** One writer: ROUNDS rounds of six writes, each through the next process in turn; what it wrote, in order. */
      const writer = async (w: number): Promise<string[]> => {
        const wrote: string[] = [];
        let n = w;
        const send = (method: string, path: string, body: unknown, status: number) => ok(calls[n++ % 2]!(method, path, body), status, `writer ${w} ${method} ${path}`);
        for (let r = 0; r < ROUNDS; r++) {
          const item = await send("POST", "/v1/ext/items", { name: `W${w} R${r}`, pipeline_id: pipelineId, stage_id: stageId }, 201);
          wrote.push(`item.created ${item.item_id}`);
          await send("PATCH", `/v1/ext/items/${item.item_id}`, { name: `W${w} R${r} renamed` }, 200);
          wrote.push(`item.updated ${item.item_id}`);
          const task = await send("POST", "/v1/ext/tasks", { title: `W${w} R${r}`, due_at: "2026-03-01T09:30:00Z", assigned_to: "ada", item_id: item.item_id }, 201);
          wrote.push(`task.created ${task.task_id}`);
          await send("PATCH", `/v1/ext/tasks/${task.task_id}`, { title: `W${w} R${r} renamed` }, 200);
          wrote.push(`task.updated ${task.task_id}`);
          const note = await send("POST", "/v1/ext/notes", { item_id: item.item_id, body: `W${w} R${r}` }, 201);
          wrote.push(`note.created ${note.note_id}`);
          await send("PATCH", `/v1/ext/notes/${note.note_id}`, { pinned: true }, 200);
          wrote.push(`note.updated ${note.note_id}`);
        }
        return wrote;
      };

      // The consumer: pages of 7 (so Link is followed often), alternately through each process, until the writers
      // are done and one last pass finds nothing new.
      const seen: Seen[] = [];
      let cursor = start;
      let polls = 0;
      let seenWhileWriting = 0;
      let writing = true;
      const pass = async () => {
        let path: string | null = `/v1/ext/events?after=${cursor}&limit=7`;
        while (path) {
          const base = [pair.a, pair.b][polls++ % 2]!.url;
          const res = await fetch(`${base}${path}`, { headers: { "x-api-key": pair.apiKey } });
          const body = (await res.json()) as Seen[];
          if (res.status !== 200) throw new Error(`feed ${path}: ${res.status} ${JSON.stringify(body)}`);
          for (const e of body) seen.push({ event_id: e.event_id, event: e.event, resource_id: e.resource_id });
          if (writing) seenWhileWriting = seen.length;
          if (body.length > 0) cursor = body[body.length - 1]!.event_id;
          path = nextOf(res);
        }
      };
      const consumer = (async () => {
        while (writing) {
          await pass();
          await new Promise((r) => setTimeout(r, 20));
        }
        await pass();
      })();
      const written = await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
      writing = false;
      await consumer;

      // The stored events after the start, in seq order, straight from the shared schema.
      const { Client } = await import("pg");
      const url = new URL(pair.databaseUrl);
      const schema = url.searchParams.get("schema")!;
      url.searchParams.delete("schema");
      const client = new Client({ connectionString: url.toString(), options: `-c search_path="${schema}"` });
      await client.connect();
      let stored: { id: string; type: string; resource_id: string; seq: string }[];
      try {
        stored = (
          await client.query(
            `SELECT e.id, e.type, e.resource_id, e.seq::text AS seq FROM webhook_events e
             WHERE e.company_id = (SELECT company_id FROM webhook_events WHERE id = $1) AND e.seq > (SELECT seq FROM webhook_events WHERE id = $1)
             ORDER BY e.seq`,
            [start],
          )
        ).rows;
      } finally {
        await client.end();
      }

      const total = WRITERS * ROUNDS * 6;
      expect(stored).toHaveLength(total);
      // Exactly once each, none skipped, in seq order.
      expect(new Set(seen.map((e) => e.event_id)).size).toBe(seen.length);
      expect(seen.map((e) => e.event_id)).toEqual(stored.map((e) => e.id));
      const order = seen.map((e) => `${e.event} ${e.resource_id}`);
      // Each writer's writes, in the order it made them (each waited for the previous answer, so committed in it).
      for (const wrote of written) expect(order.filter((x) => wrote.includes(x))).toEqual(wrote);
      expect(new Set(written.flat())).toEqual(new Set(order));
      // The consumer really ran beside the writers (not only after them), through both processes.
      expect(seenWhileWriting).toBeGreaterThan(0);
      expect(polls).toBeGreaterThan(10);

      // Deliveries follow the same order: each subscription receives its events in the feed's order.
      // (The item.created subscription also gets the starting event, written before the writers began.)
      const firstReceipts = (requests: ReceivedRequest[]) => [...new Set(requests.map((r) => r.headers["webhook-id"]!))].filter((id) => id !== start);
      for (const event of SUBSCRIBED) {
        const expected = seen.filter((e) => e.event === event).map((e) => e.event_id);
        expect(expected).toHaveLength(WRITERS * ROUNDS);
        const received = () => firstReceipts(receiver.accepted(`${prefix}/${event}`));
        await receiver.waitFor(() => received().length >= expected.length, `${expected.length} ${event} deliveries`, 30_000);
        expect(received()).toEqual(expected);
      }
    }, 120_000);
  });
}

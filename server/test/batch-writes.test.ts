/**
 * POST /v1/ext/items/batch and /v1/ext/tasks/batch (CONTRACT "Batch writes", issue 31): per-operation results in
 * order with the status and problem each operation would answer alone; non-atomic mixed success and failure; atomic
 * all or nothing (422 `batch_failed`, the others 424, no item or event left); events in operation order; the envelope
 * bounds (0 and 101 operations, unknown fields: 400); another company's ids are that operation's 404/422; one
 * rate-limit unit per batch; `Idempotency-Key` over the whole batch (replay, reuse, concurrent duplicate); two atomic
 * batches touching the same items in opposite orders, concurrently (no deadlock); a non-atomic batch's deliveries all
 * arrive in operation order (its dispatcher wake-ups are throttled); a database error in one of several consecutive
 * creates (committed together on PostgreSQL) is that operation's 500 alone; upserts that create (committed together on
 * PostgreSQL too) handle the batch's own duplicates in order, and concurrent batches of the same emails in different
 * orders, beside single upserts, make one item per email. Both databases.
 */
import { expectReplayedProblem } from "./helpers/replayed-problem";
import { CLI_ACTOR } from "../src/services/audit-log";
import { createUser } from "../src/services/users";
import { awayFromWindowEnd } from "./helpers/fixed-window";
import { useProcessPair } from "./helpers/process-pair";
import { startReceiver } from "./helpers/receiver";
import { startTestServerWithRateLimit, type TestServer } from "./helpers/test-server";

let t: TestServer;
const ITEMS = "/v1/ext/items/batch";
const TASKS = "/v1/ext/tasks/batch";
const stage = (i: number) => t.pipeline.stages[i]!;
const api = (method: string, path: string, body?: unknown, key?: string | null, headers?: Record<string, string>) =>
  t.request(method, path, body, key ?? t.apiKey, headers);
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}@example.com`;
const createBody = (extra: Record<string, unknown> = {}) => ({ name: "Batch deal", pipeline_id: t.pipeline.id, stage_id: stage(0).id, ...extra });
const newItem = async (extra: Record<string, unknown> = {}) => {
  const res = await api("POST", "/v1/ext/items", createBody(extra));
  expect(res.status).toBe(201);
  return res.body as { item_id: string; version: number; name: string };
};
const eventCount = () => t.server.ctx.prisma.webhookEvent.count({ where: { companyId: t.companyId } });
const itemCount = () => t.server.ctx.prisma.item.count({ where: { companyId: t.companyId } });
/** A problem without its `detail` (the batch may word the detail of a 400 differently: "operation" for "request body"). */
const withoutDetail = (p: Record<string, unknown>) => {
  const { detail: _detail, request_id: _id, ...rest } = p;
  return rest;
};
/**
 * A single request's problem body as a batch result carries it: without `request_id`, which names the single request
 * (the batch's own id is its response's Request-Id; CONTRACT "Request ids and the request log").
 */
const asBatchResult = (p: Record<string, unknown>) => {
  const { request_id: _id, ...rest } = p;
  return rest;
};

beforeAll(async () => {
  t = await startTestServerWithRateLimit(10_000);
});
afterAll(async () => {
  await t?.close();
});

describe("items batch: non-atomic", () => {
  it("runs every operation in order; each result has the status and problem the operation alone answers", async () => {
    const other = await t.newCompany("Batch Other Co");
    const foreign = await api("POST", "/v1/ext/items", { name: "Theirs", pipeline_id: other.pipeline.id, stage_id: other.pipeline.stages[0]!.id }, other.apiKey);
    expect(foreign.status).toBe(201);
    const existing = await newItem({ name: "To update" });
    const doomed = await newItem({ name: "To delete" });
    const email = unique("batch");
    const badStage = createBody({ stage_id: "no-such-stage" });
    const operations = [
      { op: "create", ref: "r0", ...createBody({ name: "Created in batch" }) },
      { op: "create", ref: "r1", ...badStage },
      { op: "update", ref: "r2", item_id: existing.item_id, name: "Updated in batch" },
      { op: "update", ref: "r3", item_id: foreign.body.item_id, name: "Not yours" },
      { op: "upsert", ref: "r4", ...createBody({ metadata: { email } }) },
      { op: "upsert", ref: "r5", ...createBody({ name: "Upserted again", metadata: { email } }) },
      { op: "delete", ref: "r6", item_id: doomed.item_id },
      { op: "delete", ref: "r7", item_id: foreign.body.item_id },
      { op: "create", ref: "r8", name: "" },
      { op: "explode", ref: "r9" },
      { op: "update", item_id: existing.item_id, version: 1, name: "Stale" },
    ];
    const res = await api("POST", ITEMS, { operations });
    expect(res.status).toBe(200);
    const results = res.body.results as { index: number; ref: string | null; status: number; item: any; problem: any; upsert?: string }[];
    expect(results.map((r) => r.index)).toEqual(operations.map((_, i) => i));
    expect(results.map((r) => r.ref)).toEqual(["r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", null]);
    expect(results.map((r) => r.status)).toEqual([201, 422, 200, 404, 201, 200, 204, 404, 400, 400, 409]);
    expect(results[0]!.item).toMatchObject({ name: "Created in batch", version: 1 });
    expect(results[2]!.item).toMatchObject({ item_id: existing.item_id, name: "Updated in batch", version: 2 });
    expect(results[4]!.upsert).toBe("created");
    expect(results[5]).toMatchObject({ upsert: "updated", item: { item_id: results[4]!.item.item_id, name: "Upserted again" } });
    expect(results[6]).toMatchObject({ item: null, problem: null });
    expect(results[10]!.problem).toMatchObject({ code: "version_conflict", current_version: 2 });
    expect(results[9]!.problem.errors).toEqual([{ path: "op", message: 'op must be one of "create", "update", "upsert", "delete".' }]);

    // Same problem bodies as the single requests.
    const single422 = await api("POST", "/v1/ext/items", badStage);
    expect(results[1]!.problem).toEqual(asBatchResult(single422.body));
    const single404 = await api("PATCH", `/v1/ext/items/${foreign.body.item_id}`, { name: "Not yours" });
    expect(results[3]!.problem).toEqual(asBatchResult(single404.body));
    const single400 = await api("POST", "/v1/ext/items", { name: "" });
    expect(withoutDetail(results[8]!.problem)).toEqual(withoutDetail(single400.body));

    // Applied: the other company's item is untouched; the deleted one is gone.
    expect((await api("GET", `/v1/ext/items/${foreign.body.item_id}`, undefined, other.apiKey)).body.name).toBe("Theirs");
    expect((await api("GET", `/v1/ext/items/${doomed.item_id}`)).status).toBe(404);
    expect((await api("GET", `/v1/ext/items/${results[0]!.item.item_id}`)).body).toEqual(results[0]!.item);
  });

  it("writes exactly the events each operation would alone, in operation order", async () => {
    const a = await newItem({ name: "A" });
    const before = await t.server.ctx.prisma.webhookEvent.findFirst({ where: { companyId: t.companyId }, orderBy: { seq: "desc" } });
    const res = await api("POST", ITEMS, {
      operations: [
        { op: "create", ...createBody({ name: "B" }) },
        { op: "update", item_id: a.item_id, stage_id: stage(1).id },
        { op: "update", item_id: a.item_id, name: "A" }, // no change: no event
        { op: "delete", item_id: a.item_id },
      ],
    });
    expect(res.body.results.map((r: { status: number }) => r.status)).toEqual([201, 200, 200, 204]);
    const events = await t.server.ctx.prisma.webhookEvent.findMany({
      where: { companyId: t.companyId, seq: { gt: before!.seq } },
      orderBy: { seq: "asc" },
    });
    expect(events.map((e) => [e.type, e.resourceId])).toEqual([
      ["item.created", res.body.results[0].item.item_id],
      ["item.updated", a.item_id],
      ["item.stage_changed", a.item_id],
      ["item.deleted", a.item_id],
    ]);
  });
});

describe("items batch: creates committed together (PostgreSQL) still answer as alone", () => {
  it("a database error in one create answers 500 for it alone: the others are applied once, their events in order", async () => {
    // A real database fault for one name (a CHECK constraint), in the middle of consecutive creates: on PostgreSQL
    // they share one transaction (services/batch.ts `runGroup`), which the error rolls back, and then run one by one.
    await t.server.ctx.prisma.$executeRawUnsafe(`ALTER TABLE items ADD CONSTRAINT batch_test_fault CHECK (name <> 'Refused by the database') NOT VALID`);
    try {
      const before = await t.server.ctx.prisma.webhookEvent.findFirst({ where: { companyId: t.companyId }, orderBy: { seq: "desc" } });
      const names = ["Group A", "Group B", "Refused by the database", "Group C", ""];
      const res = await api("POST", ITEMS, { operations: names.map((name) => ({ op: "create", ...createBody({ name }) })) });
      expect(res.status).toBe(200);
      const results = res.body.results as { status: number; item: { item_id: string; name: string } | null; problem: { code: string } | null }[];
      expect(results.map((r) => r.status)).toEqual([201, 201, 500, 201, 400]);
      expect(results[2]!.problem).toMatchObject({ code: "internal" });
      const created = [results[0]!, results[1]!, results[3]!].map((r) => r.item!);
      for (const item of created) expect((await api("GET", `/v1/ext/items/${item.item_id}`)).body).toEqual(item);
      const events = await t.server.ctx.prisma.webhookEvent.findMany({ where: { companyId: t.companyId, seq: { gt: before!.seq } }, orderBy: { seq: "asc" } });
      expect(events.map((e) => [e.type, e.resourceId])).toEqual(created.map((i) => ["item.created", i.item_id]));
      expect(await t.server.ctx.prisma.item.count({ where: { companyId: t.companyId, name: { in: names } } })).toBe(3);
    } finally {
      await t.server.ctx.prisma.$executeRawUnsafe(`ALTER TABLE items DROP CONSTRAINT batch_test_fault`);
    }
  });
});

describe("items batch: upserts that create are committed together (PostgreSQL), exactly as alone", () => {
  type UpsertResultRow = { index: number; status: number; upsert?: string; item: { item_id: string; name: string; version: number } | null };
  const upsertOp = (email: string, name: string) => ({ op: "upsert", ...createBody({ name, metadata: { email } }) });

  it("the batch's own duplicates run in order (a later upsert of an email created earlier in the batch updates that item); an invalid one answers as alone", async () => {
    const [a, b, c] = [unique("dup-a"), unique("dup-b"), unique("dup-c")];
    await newItem(); // so that an event exists to count from
    const before = await t.server.ctx.prisma.webhookEvent.findFirst({ where: { companyId: t.companyId }, orderBy: { seq: "desc" } });
    const res = await api("POST", ITEMS, {
      operations: [upsertOp(a, "A1"), upsertOp("not-an-email", "Bad"), upsertOp(b, "B1"), upsertOp(a.toUpperCase(), "A2"), upsertOp(c, "C1"), upsertOp(b, "B1"), upsertOp(a, "A3")],
    });
    expect(res.status).toBe(200);
    const results = res.body.results as (UpsertResultRow & { problem: unknown })[];
    expect(results.map((r) => [r.status, r.upsert])).toEqual([
      [201, "created"],
      [422, undefined],
      [201, "created"],
      [200, "updated"],
      [201, "created"],
      [200, "unchanged"],
      [200, "updated"],
    ]);
    // The invalid one answers in its place what it answers alone; the group's other creates are applied.
    expect(results[1]!.problem).toEqual(asBatchResult((await api("POST", "/v1/ext/items/upsert", createBody({ name: "Bad", metadata: { email: "not-an-email" } }))).body));
    const [idA, idB, idC] = [results[0]!.item!.item_id, results[2]!.item!.item_id, results[4]!.item!.item_id];
    expect([results[3]!.item!.item_id, results[6]!.item!.item_id, results[5]!.item!.item_id]).toEqual([idA, idA, idB]);
    expect(results[6]!.item).toMatchObject({ name: "A3", version: 3 });
    expect((await api("GET", `/v1/ext/items/${idA}`)).body).toEqual(results[6]!.item);
    for (const email of [a, b, c]) {
      expect(await t.server.ctx.prisma.item.count({ where: { companyId: t.companyId, metadata: { path: ["email"], equals: email } } })).toBe(1);
    }
    const events = await t.server.ctx.prisma.webhookEvent.findMany({ where: { companyId: t.companyId, seq: { gt: before!.seq } }, orderBy: { seq: "asc" } });
    expect(events.map((e) => [e.type, e.resourceId])).toEqual([
      ["item.created", idA],
      ["item.created", idB],
      ["item.updated", idA],
      ["item.created", idC],
      ["item.updated", idA],
    ]);
  });

  it("concurrent batches upserting the same new emails in different orders, beside single upserts of them, make one item per email", async () => {
    const emails = Array.from({ length: 30 }, (_, i) => unique(`race-${i}`));
    const orders = [emails, [...emails].reverse(), [...emails.slice(15), ...emails.slice(0, 15)], emails.filter((_, i) => i % 2 === 0).concat(emails.filter((_, i) => i % 2 === 1))];
    const batches = Array.from({ length: 8 }, (_, n) => api("POST", ITEMS, { operations: orders[n % orders.length]!.map((e) => upsertOp(e, `Race ${n}`)) }));
    const singles = emails.slice(0, 10).map((e) => api("POST", "/v1/ext/items/upsert", createBody({ name: "Race single", metadata: { email: e } })));
    const [batchResponses, singleResponses] = [await Promise.all(batches), await Promise.all(singles)];
    for (const r of [...batchResponses, ...singleResponses]) expect(r.status).toBeLessThan(300);
    const byEmail = new Map<string, { status: number; id: string }[]>(emails.map((e) => [e, []]));
    batchResponses.forEach((r, n) => {
      for (const [i, result] of (r.body.results as UpsertResultRow[]).entries()) {
        expect(result.status === 201 || result.status === 200).toBe(true);
        byEmail.get(orders[n % orders.length]![i]!)!.push({ status: result.status, id: result.item!.item_id });
      }
    });
    singleResponses.forEach((r, i) => byEmail.get(emails[i]!)!.push({ status: r.status, id: r.body.item_id }));
    for (const [email, answers] of byEmail) {
      expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
      expect(new Set(answers.map((a) => a.id)).size).toBe(1);
      const items = await t.server.ctx.prisma.item.findMany({ where: { companyId: t.companyId, metadata: { path: ["email"], equals: email } } });
      expect(items.map((i) => i.id)).toEqual([answers[0]!.id]);
      expect(await t.server.ctx.prisma.webhookEvent.count({ where: { companyId: t.companyId, type: "item.created", resourceId: items[0]!.id } })).toBe(1);
    }
  }, 60_000);
});

describe("items batch: deliveries", () => {
  it("a non-atomic batch's deliveries all arrive, in operation order, though it wakes the dispatcher at most every 50 ms", async () => {
    const receiver = await startReceiver();
    try {
      const hook = await api("POST", "/v1/ext/webhooks", { target_url: `${receiver.url}/batch-order`, event: "item.created" });
      expect(hook.status).toBe(201);
      const res = await api("POST", ITEMS, { operations: Array.from({ length: 12 }, (_, i) => ({ op: "create", ...createBody({ name: `Delivered ${i}` }) })) });
      expect(res.status).toBe(200);
      const ids = (res.body.results as { item: { item_id: string } }[]).map((r) => r.item.item_id);
      await receiver.waitFor(() => receiver.accepted("/batch-order").length >= ids.length, "the batch's 12 deliveries");
      const received = receiver.accepted("/batch-order").map((r) => JSON.parse(r.body.toString("utf8")).item_id as string);
      expect(received).toEqual(ids);
      expect((await api("DELETE", `/v1/ext/webhooks/${hook.body.id}`)).status).toBe(204);
    } finally {
      await receiver.close();
    }
  });
});

describe("items batch: atomic", () => {
  it("applies nothing when one operation fails: 422 batch_failed, the failed one's problem, the others 424, no event", async () => {
    const existing = await newItem({ name: "Untouched" });
    const hook = await api("POST", "/v1/ext/webhooks", { target_url: "http://127.0.0.1:9/batch", event: "item.created" });
    expect(hook.status).toBe(201);
    const deliveries = () => t.server.ctx.prisma.webhookDelivery.count({ where: { subscriptionId: hook.body.id } });
    const [items, events, queued] = [await itemCount(), await eventCount(), await deliveries()];
    const res = await api("POST", ITEMS, {
      atomic: true,
      operations: [
        { op: "create", ref: "a", ...createBody({ name: "Rolled back" }) },
        { op: "update", ref: "b", item_id: existing.item_id, name: "Rolled back too" },
        { op: "upsert", ref: "c", ...createBody({ metadata: { email: unique("atomic") } }) },
        { op: "update", ref: "d", item_id: "01935d70-1b2c-7d4e-8f50-000000000000", name: "Nobody" },
        { op: "create", ref: "e", ...createBody() },
      ],
    });
    expect(res.status).toBe(422);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(res.body).toMatchObject({ code: "batch_failed", status: 422 });
    expect(res.body.results.map((r: { status: number }) => r.status)).toEqual([424, 424, 424, 404, 424]);
    expect(res.body.results[3].problem).toMatchObject({ code: "not_found" });
    expect(res.body.results[0]).toEqual({ index: 0, ref: "a", status: 424, item: null, problem: null });
    expect(await itemCount()).toBe(items);
    expect(await eventCount()).toBe(events);
    expect(await deliveries()).toBe(queued);
    expect((await api("GET", `/v1/ext/items/${existing.item_id}`)).body).toMatchObject({ name: "Untouched", version: 1 });
    expect((await api("DELETE", `/v1/ext/webhooks/${hook.body.id}`)).status).toBe(204);
  });

  it("reports every operation that fails its schema and runs none", async () => {
    const items = await itemCount();
    const res = await api("POST", ITEMS, { atomic: true, operations: [{ op: "create", ...createBody() }, { op: "create" }, { op: "delete" }] });
    expect(res.status).toBe(422);
    expect(res.body.results.map((r: { status: number }) => r.status)).toEqual([424, 400, 400]);
    expect(await itemCount()).toBe(items);
  });

  it("applies all operations in one transaction when every one succeeds, with their events after commit", async () => {
    const a = await newItem();
    const email = unique("atomic-upsert");
    const matched = await newItem({ name: "Matched", metadata: { email } });
    const events = await eventCount();
    const res = await api("POST", ITEMS, {
      atomic: true,
      operations: [
        { op: "create", ...createBody({ name: "Atomic 1" }) },
        { op: "create", ...createBody({ name: "Atomic 2" }) },
        { op: "update", item_id: a.item_id, version: 1, name: "Atomic update" },
        { op: "delete", item_id: a.item_id, version: 2 },
        { op: "upsert", ...createBody({ name: "Matched and renamed", metadata: { email } }) },
        { op: "upsert", ...createBody({ name: "Matched and renamed", metadata: { email } }) },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: { status: number }) => r.status)).toEqual([201, 201, 200, 204, 200, 200]);
    expect(res.body.results.map((r: { upsert?: string }) => r.upsert ?? null)).toEqual([null, null, null, null, "updated", "unchanged"]);
    expect(res.body.results[4].item).toMatchObject({ item_id: matched.item_id, name: "Matched and renamed", version: 2 });
    expect(await eventCount()).toBe(events + 5);
    expect((await api("GET", `/v1/ext/items/${res.body.results[1].item.item_id}`)).status).toBe(200);
  });

  it("two atomic batches updating the same items in opposite orders, concurrently, both complete", async () => {
    const items = await Promise.all([newItem(), newItem(), newItem(), newItem()]);
    const ops = (list: { item_id: string }[], label: string) => list.map((i) => ({ op: "update", item_id: i.item_id, name: `${label} ${i.item_id}` }));
    const rounds = await Promise.all(
      Array.from({ length: 4 }, (_, n) => api("POST", ITEMS, { atomic: true, operations: ops(n % 2 ? [...items].reverse() : items, `round ${n}`) })),
    );
    for (const r of rounds) expect(r.status).toBe(200);
    for (const i of items) expect((await api("GET", `/v1/ext/items/${i.item_id}`)).body.version).toBe(5);
  });
});

describe("batch operations over notes and people (issue 30 merged with 31)", () => {
  it("an atomic batch deletes an item with notes (the notes go with it) and creates a task whose assignee is a user", async () => {
    const item = await newItem({ name: "Has notes" });
    const note = await api("POST", "/v1/ext/notes", { item_id: item.item_id, body: "A note that goes with its item" });
    expect(note.status).toBe(201);
    const user = await createUser(t.server.ctx.prisma, { company_id: t.companyId, email: unique("assignee"), role: "member" }, { actor: CLI_ACTOR });

    const items = await api("POST", ITEMS, { atomic: true, operations: [{ op: "delete", item_id: item.item_id }] });
    expect(items.status).toBe(200);
    expect(items.body.results[0]).toMatchObject({ status: 204, item: null, problem: null });
    expect((await api("GET", `/v1/ext/notes/${note.body.note_id}`)).status).toBe(404);

    const tasks = await api("POST", TASKS, {
      atomic: true,
      operations: [{ op: "create", title: "Call back", due_at: "2030-01-01T09:00:00Z", assigned_to: user.id }],
    });
    expect(tasks.status).toBe(200);
    expect(tasks.body.results[0]).toMatchObject({ status: 201, task: { assigned_to: user.id, assignee: { user_id: user.id, email: user.email } } });
  });
});

describe("batch envelope", () => {
  it("is a 400 for the whole request: 0 or 101 operations, unknown field, not an object, atomic not a boolean", async () => {
    const items = await itemCount();
    const op = { op: "create", ...createBody() };
    for (const body of [
      { operations: [] },
      { operations: Array.from({ length: 101 }, () => op) },
      { operations: [op], extra: true },
      [op],
      { operations: [op], atomic: "yes" },
      {},
    ]) {
      const res = await api("POST", ITEMS, body);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("validation_failed");
    }
    expect(await itemCount()).toBe(items);
    expect((await api("POST", ITEMS, { operations: Array.from({ length: 100 }, () => op) })).status).toBe(200);
    expect(await itemCount()).toBe(items + 100);
    // The 1 MiB body limit holds for batches: 100 operations of 11 KB each are a 413, and nothing is created.
    const heavy = { operations: Array.from({ length: 100 }, () => ({ op: "create", ...createBody({ name: "x".repeat(200), metadata: { notes_blob: "y".repeat(11_000) } }) })) };
    const tooLarge = await api("POST", ITEMS, heavy);
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.code).toBe("payload_too_large");
    expect(await itemCount()).toBe(items + 100);
  });

  it("needs the write scope of its resource", async () => {
    const reader = await t.newKey(["items:read", "tasks:read"]);
    expect((await api("POST", ITEMS, { operations: [{ op: "create", ...createBody() }] }, reader.key)).status).toBe(403);
    const tasksOnly = await t.newKey(["tasks:write"]);
    expect((await api("POST", ITEMS, { operations: [{ op: "create", ...createBody() }] }, tasksOnly.key)).status).toBe(403);
    expect((await api("GET", ITEMS)).status).toBe(405);
  });

  it("counts as one request for the rate limit", async () => {
    const { key } = await t.newKey();
    // Both requests in one fixed window (aligned to the clock): across a boundary the batch would count 1 afresh.
    await awayFromWindowEnd(t.server.ctx.config.rateLimitWindowSeconds * 1000, 5_000);
    const first = await api("GET", "/v1/ext/me", undefined, key);
    const before = Number(first.headers.get("ratelimit-remaining"));
    const res = await api("POST", ITEMS, { operations: Array.from({ length: 50 }, () => ({ op: "create", ...createBody() })) }, key);
    expect(res.status).toBe(200);
    expect(Number(res.headers.get("ratelimit-remaining"))).toBe(before - 1);
  });
});

describe("batch idempotency", () => {
  it("replays the whole response for the same key and body, creates nothing again, and refuses another body", async () => {
    const key = `batch-${Math.random()}`;
    const body = { operations: [{ op: "create", ...createBody({ name: "Once" }) }, { op: "create", name: "" }] };
    const first = await api("POST", ITEMS, body, undefined, { "Idempotency-Key": key });
    expect(first.status).toBe(200);
    const [items, events] = [await itemCount(), await eventCount()];
    const again = await api("POST", ITEMS, body, undefined, { "Idempotency-Key": key });
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    expect([await itemCount(), await eventCount()]).toEqual([items, events]);
    const other = await api("POST", ITEMS, { operations: [{ op: "create", ...createBody({ name: "Twice" }) }] }, undefined, { "Idempotency-Key": key });
    expect(other.status).toBe(422);
    expect(other.body.code).toBe("idempotency_key_reused");
  });

  it("more concurrent idempotent batches than pooled connections all complete (a held key takes no pooled connection)", async () => {
    const name = `Many keys ${Math.random()}`;
    const answers = await Promise.all(
      Array.from({ length: 14 }, (_, i) =>
        api("POST", ITEMS, { operations: Array.from({ length: 5 }, () => ({ op: "create", ...createBody({ name }) })) }, undefined, { "Idempotency-Key": `many-${i}-${name}` }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(14).fill(200));
    expect(await t.server.ctx.prisma.item.count({ where: { companyId: t.companyId, name } })).toBe(70);
  });

  it("replays a failed atomic batch as it was (422 batch_failed)", async () => {
    const key = `batch-atomic-${Math.random()}`;
    const body = { atomic: true, operations: [{ op: "update", item_id: "missing", name: "x" }] };
    const first = await api("POST", ITEMS, body, undefined, { "Idempotency-Key": key });
    expect(first.status).toBe(422);
    const again = await api("POST", ITEMS, body, undefined, { "Idempotency-Key": key });
    expect(again.status).toBe(422);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expectReplayedProblem(again, first);
  });

  it("a concurrent duplicate gets 409 idempotency_key_in_use or the replay; the batch runs once", async () => {
    const key = `batch-race-${Math.random()}`;
    const name = `Raced ${Math.random()}`;
    const body = { operations: Array.from({ length: 40 }, () => ({ op: "create", ...createBody({ name }) })) };
    const answers = await Promise.all([0, 1, 2].map(() => api("POST", ITEMS, body, undefined, { "Idempotency-Key": key })));
    for (const a of answers) {
      if (a.status === 409) {
        expect(a.body.code).toBe("idempotency_key_in_use");
        expect(a.headers.get("retry-after")).toBe("1");
      } else expect(a.status).toBe(200);
    }
    expect(answers.filter((a) => a.status === 200 && a.headers.get("idempotent-replayed") !== "true")).toHaveLength(1);
    expect(await t.server.ctx.prisma.item.count({ where: { companyId: t.companyId, name } })).toBe(40);
    // While the batch runs, a single create with the same key is in use too (same key space).
    const single = await api("POST", "/v1/ext/items", createBody(), undefined, { "Idempotency-Key": key });
    expect(single.status).toBe(422); // finished by now: the stored batch response, another request
  });
});

describe("tasks batch", () => {
  it("creates and updates tasks as the single requests do; another company's ids are that operation's 404/422", async () => {
    const other = await t.newCompany("Task Batch Other");
    const theirItem = await api("POST", "/v1/ext/items", { name: "Theirs", pipeline_id: other.pipeline.id, stage_id: other.pipeline.stages[0]!.id }, other.apiKey);
    const theirTask = await api("POST", "/v1/ext/tasks", { title: "Theirs", due_at: "2026-12-01T09:00:00Z", assigned_to: "x" }, other.apiKey);
    const mine = await api("POST", "/v1/ext/tasks", { title: "Mine", due_at: "2026-12-01T09:00:00Z", assigned_to: "me" });
    const item = await newItem();
    const res = await api("POST", TASKS, {
      operations: [
        { op: "create", ref: "t0", title: "Call", due_at: "2026-12-02T09:00:00Z", assigned_to: "me", item_id: item.item_id },
        { op: "create", ref: "t1", title: "Linked elsewhere", due_at: "2026-12-02T09:00:00Z", assigned_to: "me", item_id: theirItem.body.item_id },
        { op: "update", ref: "t2", task_id: mine.body.task_id, is_completed: true },
        { op: "update", ref: "t3", task_id: theirTask.body.task_id, title: "Hijack" },
        { op: "update", ref: "t4", task_id: mine.body.task_id },
        { op: "delete", ref: "t5", task_id: mine.body.task_id },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: { status: number }) => r.status)).toEqual([201, 422, 200, 404, 400, 400]);
    expect(res.body.results[0].task).toMatchObject({ title: "Call", item_id: item.item_id });
    expect(res.body.results[2].task).toMatchObject({ task_id: mine.body.task_id, is_completed: true });
    const single = await api("POST", "/v1/ext/tasks", { title: "Linked elsewhere", due_at: "2026-12-02T09:00:00Z", assigned_to: "me", item_id: theirItem.body.item_id });
    expect(res.body.results[1].problem).toEqual(asBatchResult(single.body));
    expect((await api("GET", `/v1/ext/tasks/${theirTask.body.task_id}`, undefined, other.apiKey)).body.title).toBe("Theirs");
    const events = await t.server.ctx.prisma.webhookEvent.findMany({ where: { companyId: t.companyId, resourceId: mine.body.task_id }, orderBy: { seq: "asc" } });
    expect(events.map((e) => e.type)).toEqual(["task.created", "task.updated", "task.completed"]);
  });

  it("atomic: a failing task operation rolls back the others", async () => {
    const [events] = [await eventCount()];
    const tasks = await t.server.ctx.prisma.task.count({ where: { companyId: t.companyId } });
    const res = await api("POST", TASKS, {
      atomic: true,
      operations: [
        { op: "create", title: "Rolled back", due_at: "2026-12-02T09:00:00Z", assigned_to: "me" },
        { op: "update", task_id: "missing", title: "x" },
      ],
    });
    expect(res.status).toBe(422);
    expect(res.body.results.map((r: { status: number }) => r.status)).toEqual([424, 404]);
    expect(await t.server.ctx.prisma.task.count({ where: { companyId: t.companyId } })).toBe(tasks);
    expect(await eventCount()).toBe(events);
  });
});

describe("batch erasure", () => {
  it("deleting an item erases the stored response of the idempotent items batch that holds it (replays 410 payload_erased)", async () => {
    const key = `batch-erase-${Math.random()}`;
    const body = { operations: [{ op: "create", ...createBody({ name: "Secret name", metadata: { email: unique("erase") } }) }] };
    const first = await api("POST", ITEMS, body, undefined, { "Idempotency-Key": key });
    expect(first.status).toBe(200);
    const otherKey = `batch-keep-${Math.random()}`;
    const kept = await api("POST", ITEMS, { operations: [{ op: "create", ...createBody({ name: "Kept" }) }] }, undefined, { "Idempotency-Key": otherKey });
    expect((await api("DELETE", `/v1/ext/items/${first.body.results[0].item.item_id}`)).status).toBe(204);
    const replay = await api("POST", ITEMS, body, undefined, { "Idempotency-Key": key });
    expect(replay.status).toBe(410);
    expect(replay.body.code).toBe("payload_erased");
    expect(JSON.stringify(replay.body)).not.toContain("Secret name");
    const keptReplay = await api("POST", ITEMS, { operations: [{ op: "create", ...createBody({ name: "Kept" }) }] }, undefined, { "Idempotency-Key": otherKey });
    expect(keptReplay.body).toEqual(kept.body);
  });
});

// Two processes on one database need PostgreSQL: the embedded PGlite belongs to the one process that opened it. The
// key of a batch is then held by a session-level advisory lock (db/idempotency.ts `holdKeyForRequest`), not by the
// process's own set of running keys.
if (process.env.TEST_DATABASE_URL) {
  describe("idempotent batches over two server processes on one PostgreSQL database", () => {
    const pair = useProcessPair();

    it("runs a batch once when duplicates with its key arrive at both processes; a single create with the key is refused", async () => {
      const { a, b, apiKey } = pair;
      const headers = { "x-api-key": apiKey, "content-type": "application/json" };
      const pipelines = (await (await fetch(`${a.url}/v1/ext/pipelines`, { headers })).json()) as { id: string }[];
      const stages = (await (await fetch(`${a.url}/v1/ext/pipelines/${pipelines[0]!.id}/stages`, { headers })).json()) as { id: string }[];
      for (let round = 0; round < 3; round++) {
        const key = `proc-batch-${round}-${Math.random()}`;
        const name = `Proc batch ${round} ${Math.random()}`;
        const body = JSON.stringify({ operations: Array.from({ length: 60 }, () => ({ op: "create", name, pipeline_id: pipelines[0]!.id, stage_id: stages[0]!.id })) });
        const send = (url: string, path: string, payload: string) =>
          fetch(`${url}${path}`, { method: "POST", headers: { ...headers, "Idempotency-Key": key }, body: payload }).then(async (r) => ({
            status: r.status,
            replayed: r.headers.get("idempotent-replayed") === "true",
            body: (await r.json()) as { code?: string },
          }));
        const single = JSON.stringify({ name: `${name} single`, pipeline_id: pipelines[0]!.id, stage_id: stages[0]!.id });
        const answers = await Promise.all([send(a.url, ITEMS, body), send(b.url, ITEMS, body), send(a.url, ITEMS, body), send(b.url, ITEMS, body)]);
        const singleAnswer = await send(b.url, "/v1/ext/items", single);
        expect(answers.filter((r) => r.status === 200 && !r.replayed)).toHaveLength(1);
        for (const r of answers) if (r.status !== 200) expect({ status: r.status, code: r.body.code }).toEqual({ status: 409, code: "idempotency_key_in_use" });
        expect({ status: singleAnswer.status, code: singleAnswer.body.code }).toEqual({ status: 422, code: "idempotency_key_reused" });
        const list = (await (await fetch(`${b.url}/v1/ext/items?limit=500&name=${encodeURIComponent(name)}`, { headers })).json()) as unknown[];
        expect(list).toHaveLength(60);
        const singles = (await (await fetch(`${b.url}/v1/ext/items?name=${encodeURIComponent(`${name} single`)}`, { headers })).json()) as unknown[];
        expect(singles).toHaveLength(0);
      }
    }, 90_000);
  });
}

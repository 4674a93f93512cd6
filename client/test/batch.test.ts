/**
 * Batch writes (CONTRACT "Batch writes"): `items.batch` / `tasks.batch` send `{ operations, atomic? }` with an
 * Idempotency-Key (random once per call, or the caller's; the same on a retry) and return the typed results; 422
 * `batch_failed` is BatchFailedError with the results; bounds are checked before sending. `batchAll` splits any number
 * of operations into batches of <= 100 sent in order, one at a time through the rate-limit gate, with progress,
 * `index` rebased, per-batch keys `<key>:<n>`, `startChunk` to skip finished batches, and abort between batches.
 * Also `webhooks.replay`. nock plays the server; test/client-examples/import-csv.test.ts runs batchAll for real.
 */
import nock from "nock";
import { BatchFailedError, ValidationError, type BatchProgress, type ItemBatchOperation, type ItemBatchResult } from "../src";
import { api, CREATE_BODY, client, item, problem, rateHeaders, recordingKey, useNock, useVirtualClock } from "./helpers/setup";

useNock();
const time = useVirtualClock();

const PROBLEM = { "Content-Type": "application/problem+json" };
/** A task create operation. */
const TASK = { op: "create" as const, title: "Call", due_at: "2026-03-02T09:00:00.000Z", assigned_to: "ada" };
/** A body matcher for nock (it wants an index signature). */
const json = (body: unknown) => JSON.parse(JSON.stringify(body)) as nock.DataMatcherMap;

/** `n` upsert operations labelled `row-<i>`. */
function upserts(n: number): ItemBatchOperation[] {
  return Array.from({ length: n }, (_, i) => ({ op: "upsert" as const, ref: `row-${i}`, ...CREATE_BODY, metadata: { email: `u${i}@example.com` } }));
}

/** The server's answer to a batch body: every operation created, `index` from 0 within the batch. */
function created(body: { operations: { ref?: string }[] }): { results: unknown[] } {
  return { results: body.operations.map((op, index) => ({ index, ref: op.ref ?? null, status: 201, item: item(op.ref ?? String(index)), problem: null, upsert: "created" })) };
}

describe("items.batch / tasks.batch", () => {
  it("sends the operations and atomic with a random key, and returns the results", async () => {
    const keys: string[] = [];
    const ops: ItemBatchOperation[] = [
      { op: "create", ref: "a", ...CREATE_BODY },
      { op: "update", ref: "b", item_id: "i2", name: "Renamed" },
      { op: "delete", item_id: "i3", version: 2 },
    ];
    const results = [
      { index: 0, ref: "a", status: 201, item: item("i1"), problem: null },
      { index: 1, ref: "b", status: 404, item: null, problem: problem(404, "not_found") },
      { index: 2, ref: null, status: 204, item: null, problem: null },
    ];
    api().post("/v1/ext/items/batch", json({ operations: ops })).reply(recordingKey(keys, 200, { results }));
    await expect(client().items.batch(ops)).resolves.toEqual(results);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("retries a 5xx with the caller's key and sends atomic", async () => {
    const keys: string[] = [];
    const ops = upserts(2);
    api()
      .post("/v1/ext/items/batch", json({ operations: ops, atomic: true }))
      .reply(recordingKey(keys, 502, problem(502, "internal")))
      .post("/v1/ext/items/batch", json({ operations: ops, atomic: true }))
      .reply(function (_uri, body) {
        keys.push(String(this.req.headers["idempotency-key"]));
        return [200, created(body as { operations: { ref?: string }[] })];
      });
    const results = await client().items.batch(ops, { atomic: true, idempotencyKey: "import-1" });
    expect(results.map((r) => [r.index, r.ref, r.status, r.upsert])).toEqual([
      [0, "row-0", 201, "created"],
      [1, "row-1", 201, "created"],
    ]);
    expect(keys).toEqual(["import-1", "import-1"]);
  });

  it("throws BatchFailedError (a ValidationError) with the results for 422 batch_failed", async () => {
    const results = [
      { index: 0, ref: null, status: 424, task: null, problem: null },
      { index: 1, ref: null, status: 422, task: null, problem: problem(422, "invalid_reference") },
    ];
    api().post("/v1/ext/tasks/batch").reply(422, problem(422, "batch_failed", { results }), PROBLEM);
    const err = await client()
      .tasks.batch([TASK, { op: "update", task_id: "t-other", title: "x" }], { atomic: true })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BatchFailedError);
    expect(err).toBeInstanceOf(ValidationError);
    expect(err).toMatchObject({ status: 422, code: "batch_failed", results });
  });

  it("keeps 422 idempotency_key_reused a plain ValidationError", async () => {
    api().post("/v1/ext/items/batch").reply(422, problem(422, "idempotency_key_reused"), PROBLEM);
    const err = await client()
      .items.batch(upserts(1), { idempotencyKey: "k" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect(err).not.toBeInstanceOf(BatchFailedError);
  });

  it("refuses an empty batch or one over 100 operations without sending", async () => {
    await expect(client().items.batch([])).rejects.toBeInstanceOf(TypeError);
    await expect(client().items.batch(upserts(101))).rejects.toThrow(/1 to 100 operations \(use batchAll/);
    await expect(client().tasks.batch([])).rejects.toBeInstanceOf(TypeError);
  });
});

describe("batchAll", () => {
  /** Mocks `count` item batches answering every operation 201, recording each batch's key and size. */
  function mockBatches(count: number, seen: { key: string; size: number; first: string }[], headers: (n: number) => Record<string, string> = () => ({})) {
    let n = 0;
    api()
      .post("/v1/ext/items/batch")
      .times(count)
      .reply(function (_uri, body) {
        const b = body as { operations: { ref?: string }[] };
        seen.push({ key: String(this.req.headers["idempotency-key"]), size: b.operations.length, first: b.operations[0]!.ref! });
        return [200, created(b), headers(n++)];
      });
  }

  it("sends 250 operations as 100 + 100 + 50 in order, with derived keys, progress and rebased indexes", async () => {
    const seen: { key: string; size: number; first: string }[] = [];
    mockBatches(3, seen);
    const progress: Omit<BatchProgress<ItemBatchResult>, "results">[] = [];
    const results = await client().items.batchAll(upserts(250), {
      idempotencyKey: "csv:abc",
      onProgress: ({ results: chunkResults, ...p }) => {
        expect(chunkResults[0]!.index).toBe(p.chunk * 100);
        progress.push(p);
      },
    });
    expect(seen).toEqual([
      { key: "csv:abc:0", size: 100, first: "row-0" },
      { key: "csv:abc:1", size: 100, first: "row-100" },
      { key: "csv:abc:2", size: 50, first: "row-200" },
    ]);
    expect(progress).toEqual([
      { chunk: 0, chunks: 3, done: 100, total: 250, idempotencyKey: "csv:abc:0" },
      { chunk: 1, chunks: 3, done: 200, total: 250, idempotencyKey: "csv:abc:1" },
      { chunk: 2, chunks: 3, done: 250, total: 250, idempotencyKey: "csv:abc:2" },
    ]);
    expect(results).toHaveLength(250);
    expect(results.map((r) => r.index)).toEqual(Array.from({ length: 250 }, (_, i) => i));
    expect(results.map((r) => r.ref)).toEqual(Array.from({ length: 250 }, (_, i) => `row-${i}`));
  });

  it("skips finished batches with startChunk (same keys for the rest) and takes a smaller size", async () => {
    const seen: { key: string; size: number; first: string }[] = [];
    mockBatches(2, seen);
    const results = await client().items.batchAll(upserts(30), { size: 10, startChunk: 1, idempotencyKey: "k" });
    expect(seen).toEqual([
      { key: "k:1", size: 10, first: "row-10" },
      { key: "k:2", size: 10, first: "row-20" },
    ]);
    expect(results.map((r) => r.index)).toEqual(Array.from({ length: 20 }, (_, i) => i + 10));
  });

  it("waits at the rate-limit gate between batches when the window is used up", async () => {
    const seen: { key: string; size: number; first: string }[] = [];
    mockBatches(3, seen, (n) => rateHeaders(n === 0 ? 0 : 59, 60));
    const results = await client().items.batchAll(upserts(300));
    expect(results).toHaveLength(300);
    expect(seen.map((s) => s.key.split(":")[1])).toEqual(["0", "1", "2"]);
    expect(time.sleeps).toEqual([60_000]);
  });

  it("stops at a failed atomic batch, the earlier batches applied", async () => {
    const seen: { key: string; size: number; first: string }[] = [];
    mockBatches(1, seen);
    api().post("/v1/ext/items/batch").reply(422, problem(422, "batch_failed", { results: [] }), PROBLEM);
    const done: number[] = [];
    await expect(client().items.batchAll(upserts(150), { atomic: true, onProgress: (p) => void done.push(p.done) })).rejects.toBeInstanceOf(BatchFailedError);
    expect(done).toEqual([100]);
  });

  it("stops before the next batch once aborted, with the signal's reason", async () => {
    const seen: { key: string; size: number; first: string }[] = [];
    mockBatches(1, seen);
    const controller = new AbortController();
    const err = await client()
      .items.batchAll(upserts(150), { signal: controller.signal, onProgress: () => controller.abort(new Error("stop")) })
      .catch((e: unknown) => e);
    expect(err).toEqual(new Error("stop"));
    expect(seen).toHaveLength(1);
  });

  it("returns nothing for no operations, and refuses bad options without sending", async () => {
    await expect(client().items.batchAll([])).resolves.toEqual([]);
    await expect(client().items.batchAll(upserts(5), { size: 101 })).rejects.toBeInstanceOf(TypeError);
    await expect(client().items.batchAll(upserts(5), { size: 0 })).rejects.toBeInstanceOf(TypeError);
    await expect(client().items.batchAll(upserts(5), { startChunk: -1 })).rejects.toBeInstanceOf(TypeError);
    await expect(client().tasks.batchAll([TASK], { idempotencyKey: "k".repeat(254) })).rejects.toThrow(/too long/);
  });

  it("sends task batches the same way", async () => {
    const keys: string[] = [];
    api()
      .post("/v1/ext/tasks/batch")
      .times(2)
      .reply(function (_uri, body) {
        keys.push(String(this.req.headers["idempotency-key"]));
        const ops = (body as { operations: unknown[] }).operations;
        return [200, { results: ops.map((_op, index) => ({ index, ref: null, status: 201, task: { task_id: `t${index}` }, problem: null })) }];
      });
    const results = await client().tasks.batchAll(
      Array.from({ length: 3 }, (_, i) => ({ ...TASK, title: `Task ${i}` })),
      { size: 2, idempotencyKey: "tasks" },
    );
    expect(keys).toEqual(["tasks:0", "tasks:1"]);
    expect(results.map((r) => r.index)).toEqual([0, 1, 2]);
  });
});

describe("webhooks.replay", () => {
  it("posts the range and returns the count; a blank id is refused without sending", async () => {
    api().post("/v1/ext/webhooks/w1/replay", { since: "2026-03-01T00:00:00Z", only_failed: false }).reply(202, { count: 7 });
    await expect(client().webhooks.replay("w1", { since: "2026-03-01T00:00:00Z", only_failed: false })).resolves.toEqual({ count: 7 });
    await expect(client().webhooks.replay("", { since: "2026-03-01T00:00:00Z" })).rejects.toBeInstanceOf(TypeError);
  });
});

/**
 * Batch writes (CONTRACT "Batch writes (scripts under the 60-per-60-seconds limit)"; issue 31):
 * `POST /v1/ext/items/batch` and `POST /v1/ext/tasks/batch` run up to 100 operations, each through the SAME service
 * as its single request (services/items.ts `createItem`/`updateItem`, services/item-upsert.ts `upsertItem`,
 * services/item-delete.ts `deleteItem`, services/tasks.ts `createTask`/`updateTask`), so an operation validates,
 * answers (status, problem body) and emits events exactly as it would alone, and whatever those services do later
 * (notes deleted with their item, the events feed's ordering lock) applies to batches too.
 *
 * - Non-atomic (default): the operations run in order, each in its own statements or transaction as alone; a failure
 *   is that operation's result and the next one runs. On PostgreSQL, consecutive item creates and upserts that create
 *   share a transaction of up to GROUP_MAX of them (`runGroup`, `itemGroupPlan`: one commit instead of one per
 *   create; still each answers as alone; an upsert that matches an item runs alone, after the group), and the
 *   webhook dispatcher is woken at most every WAKE_EVERY_MS while the batch runs (services/wake-throttle.ts).
 * - Atomic (`atomic: true`): all operations run in ONE transaction (db/sql.ts `inEnclosingTransaction`: the
 *   services' raw statements join it, their own transactions become savepoints), after the company's batch lock
 *   (db/batch-locks.ts: no two atomic batches of a company interleave, so they cannot deadlock on each other). The
 *   first operation that fails rolls everything back (items, events, deliveries, the stored key): the answer is 422
 *   `batch_failed` with `results`, the failed operation's own status and problem, every other one 424. Operations
 *   whose schema fails are all reported (400 each) and nothing runs.
 * - `Idempotency-Key` covers the whole batch: the key is taken before any operation runs (db/idempotency.ts
 *   `holdKeyForRequest`) and the whole response is stored (in the atomic transaction, or after the last operation).
 */
import {
  BATCH_NOT_APPLIED_STATUS,
  createProblem,
  parseItemBatchOperation,
  parseTaskBatchOperation,
  type BatchEnvelope,
  type InvalidBatchOperation,
  type Item,
  type ItemBatchOperation,
  type Problem,
  type Task,
  type TaskBatchOperation,
  type UpsertResult,
} from "@stageline/shared";
import type { AppContext } from "../context";
import { isDeadlock, lockCompanyBatches } from "../db/batch-locks";
import { findStoredResponse, holdKeyForRequest, storeFailureOrRead, storeResponse } from "../db/idempotency";
import { inEnclosingTransaction, type TransactionQuery } from "../db/sql";
import { lockMatchKeysOfMany } from "../db/upsert-locks";
import type { AuditActor } from "./audit-log";
import { outageOf } from "./database-outage";
import { DomainError } from "./errors";
import { keyInUse, StoredResponseFound, type IdempotencyClaim } from "./idempotency";
import { deleteItem } from "./item-delete";
import { createUnlessMatched, prepareUpsert, upsertItem, type PreparedUpsert } from "./item-upsert";
import { createItem, updateItem } from "./items";
import { createTask, updateTask } from "./tasks";
import { throttleWakes } from "./wake-throttle";

/** While a non-atomic batch runs, the webhook dispatcher is woken at most this often (ms), and after its last operation. */
const WAKE_EVERY_MS = 50;

/** Who sends the batch: the company, the API key (task `created_by`, the audit log of deletions) and the client IP. */
export interface BatchCaller {
  companyId: string;
  keyId: string;
  actor: AuditActor;
  ip: string | null;
}

/** What one operation answered when it succeeded. */
interface Applied<R> {
  status: 200 | 201 | 204;
  resource: R | null;
  upsert?: UpsertResult;
}

/** One result as the response carries it (`resourceKey` is `item` or `task`). */
type Result = { index: number; ref: string | null; status: number; problem: Problem | null; upsert?: UpsertResult } & Record<string, unknown>;

/** The response of a batch: `200 { results }`, or `422 batch_failed` with `results`. */
export interface BatchResponse {
  status: 200 | 422;
  body: { results: Result[] } | (Problem & { results: Result[] });
}

/** How often an atomic batch runs again after PostgreSQL broke a deadlock by failing it (see db/batch-locks.ts). */
const DEADLOCK_ATTEMPTS = 3;

/** Thrown inside the atomic transaction by the first operation that fails: rolls it back. */
class OperationFailed extends Error {
  constructor(readonly index: number, readonly problem: Problem) {
    super("batch operation failed");
  }
}

/** The problem an operation alone would have answered for `err` (a DomainError; anything else is a 500). */
function problemOf(err: DomainError): Problem {
  return createProblem(err.code, err.detail, err.extras, err.status);
}

/** The 400 an operation whose schema failed would have answered alone. */
function invalidProblem(op: InvalidBatchOperation): Problem {
  const paths = op.errors.map((e) => e.path || "body");
  const fields = paths.length > 10 ? `${paths.slice(0, 10).join(", ")} and ${paths.length - 10} more` : paths.join(", ");
  return createProblem("validation_failed", `The operation is invalid (${fields}).`, { errors: op.errors });
}

/**
 * Runs a batch whose operations are already parsed (or failed their schema), under `claim` when given.
 */
async function runBatch<Op extends { ref: string | null }, R>(
  ctx: AppContext,
  caller: BatchCaller,
  envelope: BatchEnvelope,
  run: BatchRun<Op, R>,
  claim: IdempotencyClaim | undefined,
): Promise<BatchResponse> {
  const held = claim ? await holdKeyForRequest(ctx.db, claim) : null;
  if (claim && !held) throw keyInUse();
  try {
    if (claim) {
      const stored = await findStoredResponse(ctx.prisma, claim);
      if (stored) throw new StoredResponseFound(stored);
    }
    const response = envelope.atomic ? await runAtomic(ctx, caller, run, claim) : await runEach(ctx, run);
    if (claim && !(envelope.atomic && response.status === 200)) {
      // Stored after the operations (the atomic batch that succeeded stored it in its transaction). The key is held,
      // so nothing else can have stored one meanwhile.
      await storeFailureOrRead(ctx.prisma, claim, { status: response.status, body: JSON.stringify(response.body), location: null });
    }
    return response;
  } finally {
    await held?.release();
  }
}

const isInvalid = (op: unknown): op is InvalidBatchOperation => (op as InvalidBatchOperation).invalid === true;

function success<R>(index: number, ref: string | null, resourceKey: string, applied: Applied<R>): Result {
  const result: Result = { index, ref, status: applied.status, [resourceKey]: applied.resource, problem: null };
  if (applied.upsert) result.upsert = applied.upsert;
  return result;
}

function failure(index: number, ref: string | null, resourceKey: string, problem: Problem): Result {
  return { index, ref, status: problem.status, [resourceKey]: null, problem };
}

/** The parsed operations of a batch, the key of their resource in the results, and how one valid operation runs. */
interface BatchRun<Op, R> {
  operations: (Op | InvalidBatchOperation)[];
  resourceKey: "item" | "task";
  /** Runs one valid operation through its single-request service with the context it is given. */
  apply: (ctx: AppContext, op: Op) => Promise<Applied<R>>;
  /** How valid operations may share a group commit with their neighbours in a non-atomic batch (`runGroup`). */
  group?: GroupPlan<Op, R>;
}

/** How consecutive operations of a non-atomic batch share one transaction on PostgreSQL (`runGroup`). */
interface GroupPlan<Op, R> {
  /**
   * Whether a valid operation may join a group, given the result of the last operation that ran alone in this batch
   * (undefined when none did).
   */
  groupable(op: Op, lastAlone: Result | undefined): boolean;
  /** Before the group's transaction opens (reads through Prisma are allowed here): what its operations need. */
  begin(ctx: AppContext, ops: Op[]): Promise<GroupWork<R>>;
}

/** The work of one group, from `GroupPlan.begin`. */
interface GroupWork<R> {
  /** The first statement(s) inside the group's transaction: the locks its operations need, in a fixed order. */
  lock(q: TransactionQuery): Promise<void>;
  /**
   * Runs the group's operation `k` inside the transaction as it would answer alone (a DomainError raised before its
   * statement or by a statement that wrote nothing); null when it wrote nothing and must run alone instead: the group
   * commits without it and ends there.
   */
  apply(ctx: AppContext, k: number): Promise<Applied<R> | null>;
}

/** Non-atomic: each operation on its own, in order; a failure is its result. */
async function runEach<Op extends { ref: string | null }, R>(ctx: AppContext, run: BatchRun<Op, R>): Promise<BatchResponse> {
  // Each operation commits on its own and would wake the dispatcher right after; a batch wakes it at most every
  // WAKE_EVERY_MS, and once more after its last operation.
  const wakes = throttleWakes(ctx.eventsCommitted, WAKE_EVERY_MS);
  try {
    return await runEachWith({ ...ctx, eventsCommitted: wakes.wake }, run);
  } finally {
    wakes.flush();
  }
}

async function runEachWith<Op extends { ref: string | null }, R>(ctx: AppContext, run: BatchRun<Op, R>): Promise<BatchResponse> {
  const { operations, resourceKey, group: plan } = run;
  const results: Result[] = [];
  let lastAlone: Result | undefined;
  const alone = async (i: number) => {
    lastAlone = await runAlone(ctx, run, i, operations[i] as Op);
    results.push(lastAlone);
  };
  for (let index = 0; index < operations.length; ) {
    const op = operations[index]!;
    if (isInvalid(op)) {
      results.push(failure(index, op.ref, resourceKey, invalidProblem(op)));
      index++;
      continue;
    }
    let end = index + 1;
    if (ctx.db.kind === "postgres" && plan?.groupable(op, lastAlone)) {
      while (end < operations.length && end - index < GROUP_MAX && !isInvalid(operations[end]) && plan.groupable(operations[end] as Op, lastAlone)) end++;
    }
    const group = plan && end - index > 1 ? await runGroup(ctx, run, plan, index, end) : null;
    if (group) {
      results.push(...group);
      index += group.length;
      // The operation that ended the group early (it wrote nothing there) runs alone, after the group's commit.
      if (index < end) await alone(index++);
      continue;
    }
    for (let i = index; i < end; i++) await alone(i);
    index = end;
  }
  return { status: 200, body: { results } };
}

/**
 * One operation on its own, as alone: its result, a DomainError its problem, an unreachable database 503
 * `service_unavailable`, anything else a 500 (logged).
 */
async function runAlone<Op extends { ref: string | null }, R>(ctx: AppContext, { resourceKey, apply }: BatchRun<Op, R>, index: number, op: Op): Promise<Result> {
  try {
    return success(index, op.ref, resourceKey, await apply(ctx, op));
  } catch (err) {
    if (err instanceof DomainError) return failure(index, op.ref, resourceKey, problemOf(err));
    // As alone: a database that cannot be reached is 503 service_unavailable (services/database-outage.ts).
    const outage = outageOf(err);
    if (outage) return failure(index, op.ref, resourceKey, problemOf(outage));
    // As alone: a 500 whose details stay in the log. The operations before it stay applied.
    ctx.logger.error({ err, index }, "batch operation failed unexpectedly");
    return failure(index, op.ref, resourceKey, createProblem("internal", "Something went wrong on our side with this operation. Please try it again."));
  }
}

/** Most operations one group commit holds (`runGroup`). */
const GROUP_MAX = 20;

/**
 * Runs the groupable operations `from`..`to - 1` (`GroupPlan.groupable`: item creates, and item upserts as long as
 * they create) of a non-atomic batch in ONE transaction on PostgreSQL, each through its service as alone (db/sql.ts
 * `inEnclosingTransaction`), and commits them together: one WAL flush for the group instead of one per operation,
 * the dominant cost of a create. Each still answers as alone: a create's DomainError (invalid placement or metadata,
 * unknown or archived pipeline) is raised before its statement or by a statement that wrote nothing, so it is that
 * operation's result and the group goes on. An operation whose `GroupWork.apply` answers null (an upsert that matched
 * an item: it wrote nothing) ends the group: the group commits the operations before it, and the caller runs it
 * alone (so an update never holds its item's row lock in a group, and the batch's own duplicates run in order: an
 * upsert matching an item made earlier in the group sees it, uncommitted, and goes on alone after the commit).
 * Anything else (a database error, which leaves the transaction unusable, a deadlock) rolls the whole group back,
 * and the caller runs its operations one by one as alone: null is returned then.
 * @returns the results of the operations `from`.. up to the one that ended the group (fewer than `to - from` then),
 * or null.
 *
 * Why it is safe to hold the group's locks until its commit: a create locks only the company and pipeline rows
 * (`FOR KEY SHARE`), the foreign keys' stage and status rows (likewise; a pipeline's structure never changes, and
 * only its deletion removes them, which first waits at the company and pipeline rows the group holds) and, last, the
 * company's event-order lock (db/outbox.ts); after the first create the group holds all but those stage and status
 * row locks, which nobody holds against it, so it never waits for another transaction and is in no deadlock (should
 * PostgreSQL still break one by failing the group, its operations run again one by one). An upsert adds its match
 * locks (advisory, db/upsert-locks.ts): the group takes those of all its upserts first, before any write, in lock-id
 * order, as a lone upsert takes its own in one statement before its writes; so a lone upsert that waits for a match
 * lock holds no lock the group could wait for. An atomic batch can: it holds the event-order lock from its first
 * write while it takes its later upserts' match locks; should it meet a group that way, PostgreSQL fails one of the
 * two, and either answers as if it had not met the other (the group's operations run one by one, the atomic batch
 * runs again, `DEADLOCK_ATTEMPTS`). An upsert in a group never updates (one that matches ends the group), so the
 * group holds no existing item's row. What waits: the company's other event writes, and upserts of the group's keys,
 * for at most one group (GROUP_MAX creates, a few ms each) where they waited for one create.
 * The dispatcher is woken after the commit.
 */
async function runGroup<Op extends { ref: string | null }, R>(
  ctx: AppContext,
  run: BatchRun<Op, R>,
  plan: GroupPlan<Op, R>,
  from: number,
  to: number,
): Promise<Result[] | null> {
  const quiet: AppContext = { ...ctx, eventsCommitted: () => undefined };
  try {
    const work = await plan.begin(ctx, run.operations.slice(from, to) as Op[]);
    const results = await inEnclosingTransaction(ctx.prisma, async (q) => {
      await work.lock(q);
      const out: Result[] = [];
      for (let index = from; index < to; index++) {
        const op = run.operations[index] as Op;
        try {
          const applied = await work.apply(quiet, index - from);
          if (!applied) break;
          out.push(success(index, op.ref, run.resourceKey, applied));
        } catch (err) {
          if (!(err instanceof DomainError)) throw err;
          out.push(failure(index, op.ref, run.resourceKey, problemOf(err)));
        }
      }
      return out;
    });
    if (results.length > 0) ctx.eventsCommitted();
    return results;
  } catch (err) {
    ctx.logger.warn({ err, from, to }, "batch group rolled back; its operations run one by one");
    return null;
  }
}

/** Atomic: every operation in one transaction; the first failure rolls back all (422 `batch_failed`). */
async function runAtomic<Op extends { ref: string | null }, R>(
  ctx: AppContext,
  caller: BatchCaller,
  { operations, resourceKey, apply }: BatchRun<Op, R>,
  claim: IdempotencyClaim | undefined,
): Promise<BatchResponse> {
  const failed = new Map<number, Problem>();
  for (const [index, op] of operations.entries()) if (isInvalid(op)) failed.set(index, invalidProblem(op));
  if (failed.size > 0) return batchFailed(operations, resourceKey, failed);

  // The services wake the dispatcher after their writes; here that waits for the commit.
  const quiet: AppContext = { ...ctx, eventsCommitted: () => undefined };
  for (let attempt = 1; ; attempt++) {
    try {
      const results = await inEnclosingTransaction(ctx.prisma, async (q) => {
        await lockCompanyBatches(q, caller.companyId);
        const out: Result[] = [];
        for (const [index, op] of (operations as Op[]).entries()) {
          try {
            out.push(success(index, op.ref, resourceKey, await apply(quiet, op)));
          } catch (err) {
            if (err instanceof DomainError) throw new OperationFailed(index, problemOf(err));
            throw err;
          }
        }
        if (claim) await storeResponse(q, claim, { status: 200, body: JSON.stringify({ results: out }), location: null });
        return out;
      });
      ctx.eventsCommitted();
      return { status: 200, body: { results } };
    } catch (err) {
      if (err instanceof OperationFailed) return batchFailed(operations, resourceKey, new Map([[err.index, err.problem]]));
      if (isDeadlock(err) && attempt < DEADLOCK_ATTEMPTS) continue;
      throw err;
    }
  }
}

/** 422 `batch_failed`: the failed operations with their problem, every other one 424. */
function batchFailed(operations: { ref: string | null }[], resourceKey: string, failed: Map<number, Problem>): BatchResponse {
  const results = operations.map((op, index) => {
    const problem = failed.get(index);
    return problem ? failure(index, op.ref, resourceKey, problem) : { index, ref: op.ref, status: BATCH_NOT_APPLIED_STATUS, [resourceKey]: null, problem: null };
  });
  const which = [...failed.keys()].join(", ");
  const problem = createProblem(
    "batch_failed",
    `Operation${failed.size === 1 ? "" : "s"} ${which} failed, so none of this atomic batch was applied (the others answer 424). Fix ${failed.size === 1 ? "it" : "them"} and send the batch again.`,
  );
  return { status: 422, body: { ...problem, results } };
}

/**
 * CONTRACT "Batch writes": runs an items batch (`create`, `update`, `upsert`, `delete`) for `caller`.
 * @param claim the batch's `Idempotency-Key` claim (http/idempotency.ts), or undefined.
 * @returns `200 { results }` in operation order (each `status` what the operation alone answers: 201, 200, 204, 4xx),
 * or, atomic, `422 batch_failed` with the same `results`.
 * @throws StoredResponseFound when the key has a stored response; 409 `idempotency_key_in_use` while another request
 * holds it; an unexpected error of an atomic batch (nothing applied).
 */
export function runItemBatch(ctx: AppContext, caller: BatchCaller, envelope: BatchEnvelope, claim?: IdempotencyClaim): Promise<BatchResponse> {
  const operations = envelope.operations.map(parseItemBatchOperation);
  return runBatch<ItemBatchOperation, Item>(
    ctx,
    caller,
    envelope,
    { operations, resourceKey: "item", apply: (c, op) => applyItemOperation(c, caller, op), group: itemGroupPlan(caller) },
    claim,
  );
}

/**
 * The group commit of an items batch (`runGroup`): creates, and upserts until one matches an item. Before the
 * transaction, every upsert of the group is validated (services/item-upsert.ts `prepareUpsert`; its DomainError is
 * its result, in its place); inside, the match locks of all of them are taken first, in lock-id order, in one
 * statement (db/upsert-locks.ts `lockMatchKeysOfMany`, which says why that order keeps the group out of deadlocks),
 * then each upsert runs `createUnlessMatched`: its match under those locks, and its create when nothing matched
 * (concurrent upserts of one key, in batches or alone, still make exactly one item: whoever holds the key's lock
 * first commits its item before the other's match query runs). An upsert that matched ends the group and runs alone;
 * the upserts after it run alone too until one of them creates.
 */
function itemGroupPlan(caller: BatchCaller): GroupPlan<ItemBatchOperation, Item> {
  return {
    // After an upsert that matched an item (it ran alone), the next ones are likely to match too (a file imported
    // again): they run alone, without opening a group that would end at once, until one creates.
    groupable: (op, lastAlone) => op.op === "create" || (op.op === "upsert" && lastAlone?.upsert !== "updated" && lastAlone?.upsert !== "unchanged"),
    begin: async (ctx, ops) => {
      const prepared: (PreparedUpsert | DomainError | null)[] = [];
      for (const op of ops) {
        if (op.op !== "upsert") prepared.push(null);
        else {
          try {
            prepared.push(await prepareUpsert(ctx, caller.companyId, op.body));
          } catch (err) {
            if (!(err instanceof DomainError)) throw err;
            prepared.push(err);
          }
        }
      }
      const upserts = prepared.filter((p): p is PreparedUpsert => p !== null && !(p instanceof DomainError));
      return {
        lock: async (q) => {
          await lockMatchKeysOfMany(
            q,
            caller.companyId,
            upserts.map((p) => ({ pipelineId: p.search.pipelineId, match: p.search.match, keys: p.criteria })),
          );
        },
        apply: async (c, k) => {
          const op = ops[k]!;
          const p = prepared[k];
          if (op.op !== "upsert") return applyItemOperation(c, caller, op);
          if (p instanceof DomainError) throw p;
          if (!p) throw new Error("upsert without its preparation"); // unreachable: begin prepares every upsert
          const outcome = await createUnlessMatched(c, p);
          return outcome && { status: 201, resource: outcome.item, upsert: outcome.result };
        },
      };
    },
  };
}

async function applyItemOperation(ctx: AppContext, caller: BatchCaller, op: ItemBatchOperation): Promise<Applied<Item>> {
  switch (op.op) {
    case "create":
      return { status: 201, resource: await createItem(ctx, caller.companyId, op.body) };
    case "update":
      return { status: 200, resource: await updateItem(ctx, caller.companyId, op.itemId, op.body) };
    case "upsert": {
      const { result, item } = await upsertItem(ctx, caller.companyId, op.body);
      return { status: result === "created" ? 201 : 200, resource: item, upsert: result };
    }
    case "delete":
      await deleteItem(ctx, caller.companyId, op.itemId, { actor: caller.actor, ip: caller.ip, version: op.version });
      return { status: 204, resource: null };
  }
}

/**
 * CONTRACT "Batch writes": runs a tasks batch (`create`, `update`) for `caller`; as `runItemBatch`.
 */
export function runTaskBatch(ctx: AppContext, caller: BatchCaller, envelope: BatchEnvelope, claim?: IdempotencyClaim): Promise<BatchResponse> {
  const operations = envelope.operations.map(parseTaskBatchOperation);
  return runBatch<TaskBatchOperation, Task>(ctx, caller, envelope, { operations, resourceKey: "task", apply: (c, op) => applyTaskOperation(c, caller, op) }, claim);
}

async function applyTaskOperation(ctx: AppContext, caller: BatchCaller, op: TaskBatchOperation): Promise<Applied<Task>> {
  if (op.op === "create") return { status: 201, resource: await createTask(ctx, caller.companyId, caller.keyId, op.body) };
  return { status: 200, resource: await updateTask(ctx, caller.companyId, op.taskId, op.body) };
}


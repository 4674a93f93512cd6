/**
 * CONTRACT "Batch writes (scripts under the 60-per-60-seconds limit)": `POST /v1/ext/items/batch` (operations
 * `create`, `update`, `upsert`, `delete`) and `POST /v1/ext/tasks/batch` (`create`, `update`), 1..100 operations, one
 * rate-limit unit, `Idempotency-Key` over the whole batch, `atomic: true` all or nothing (422 `batch_failed`).
 *
 * Two levels of validation:
 * - the envelope (`ItemBatchEnvelopeSchema`, `TaskBatchEnvelopeSchema`): an object with `operations` (an array of 1..100
 *   entries) and an optional boolean `atomic`, nothing else. Failing it is a 400 for the whole request;
 * - each operation (`parseItemBatchOperation`, `parseTaskBatchOperation`): its `op`, `ref`, target id and the body the
 *   single request takes (`ItemCreateSchema`, `ItemUpdateSchema`, ...), with the same messages. Failing it is that
 *   operation's 400 in `results`; the other operations are not affected (but see `atomic`).
 * The full request schemas (`ItemBatchRequestSchema`, `TaskBatchRequestSchema`) state both levels for the OpenAPI
 * document, so a generated client never sends an operation the server refuses.
 */
import { z } from "zod";
import { ProblemSchema, type Problem } from "./errors";
import { booleanField, hasAnyField, idField, strictBody, textField, wholeNumberField, AT_LEAST_ONE_FIELD_MESSAGE } from "./fields";
import { ItemCreateSchema, ItemSchema, ItemUpdateSchema, ItemUpsertSchema, UPSERT_RESULTS, type ItemCreate, type ItemUpdate } from "./items";
import { TaskCreateSchema, TaskSchema, TaskUpdateSchema, type TaskCreate, type TaskUpdate } from "./tasks";
import { toFieldErrors } from "./errors";

/** CONTRACT "Batch writes": at most this many operations in one batch (and at least one). */
export const BATCH_MAX_OPERATIONS = 100;

/** The operations of `POST /v1/ext/items/batch`. */
export const ITEM_BATCH_OPS = ["create", "update", "upsert", "delete"] as const;
/** The operations of `POST /v1/ext/tasks/batch`. */
export const TASK_BATCH_OPS = ["create", "update"] as const;

/** HTTP status of an operation of a failed atomic batch that did not fail itself (RFC 4918 "Failed Dependency"). */
export const BATCH_NOT_APPLIED_STATUS = 424;

/** `ref`: the client's own label of an operation, echoed in its result (e.g. a CSV row number). */
const refField = textField("ref").optional();

const opOf = <const T extends string>(op: T) =>
  z.literal(op, { error: `op must be "${op}".` });

const atLeastOne = <T extends Record<string, unknown>>(keys: readonly string[]) => (value: T) =>
  hasAnyField(Object.fromEntries(keys.map((k) => [k, value[k]])));

const ITEM_UPDATE_KEYS = Object.keys(ItemUpdateSchema.shape);
const TASK_UPDATE_KEYS = Object.keys(TaskUpdateSchema.shape);

/** An items-batch `create`: the body of POST /v1/ext/items plus `op` and `ref`. */
export const ItemBatchCreateSchema = strictBody({ op: opOf("create"), ref: refField, ...ItemCreateSchema.shape });
/** An items-batch `upsert`: the body of POST /v1/ext/items/upsert plus `op` and `ref`. */
export const ItemBatchUpsertSchema = strictBody({ op: opOf("upsert"), ref: refField, ...ItemUpsertSchema.shape });
/** An items-batch `update`: `item_id` and the body of PATCH /v1/ext/items/{item_id} (at least one of its fields). */
export const ItemBatchUpdateSchema = strictBody({ op: opOf("update"), ref: refField, item_id: idField("item_id"), ...ItemUpdateSchema.shape })
  .refine(atLeastOne(ITEM_UPDATE_KEYS), { error: AT_LEAST_ONE_FIELD_MESSAGE })
  .meta({ minProperties: 3 });
/** An items-batch `delete`: `item_id` and the optional expected `version` of DELETE /v1/ext/items/{item_id}. */
export const ItemBatchDeleteSchema = strictBody({
  op: opOf("delete"),
  ref: refField,
  item_id: idField("item_id"),
  version: wholeNumberField("version", 1).optional(),
});

/** A tasks-batch `create`: the body of POST /v1/ext/tasks plus `op` and `ref`. */
export const TaskBatchCreateSchema = strictBody({ op: opOf("create"), ref: refField, ...TaskCreateSchema.shape });
/** A tasks-batch `update`: `task_id` and the body of PATCH /v1/ext/tasks/{task_id} (at least one of its fields). */
export const TaskBatchUpdateSchema = strictBody({ op: opOf("update"), ref: refField, task_id: idField("task_id"), ...TaskUpdateSchema.shape })
  .refine(atLeastOne(TASK_UPDATE_KEYS), { error: AT_LEAST_ONE_FIELD_MESSAGE })
  .meta({ minProperties: 3 });

/** One operation of an items batch (documentation and generated clients; the server parses each one on its own). */
export const ItemBatchOperationSchema = z.discriminatedUnion("op", [
  ItemBatchCreateSchema,
  ItemBatchUpdateSchema,
  ItemBatchUpsertSchema,
  ItemBatchDeleteSchema,
]);
/** One operation of a tasks batch. */
export const TaskBatchOperationSchema = z.discriminatedUnion("op", [TaskBatchCreateSchema, TaskBatchUpdateSchema]);

const operationsField = <T extends z.ZodType>(operation: T) =>
  z
    .array(operation, { error: "operations must be a list of operations." })
    .min(1, { error: "operations must hold at least one operation." })
    .max(BATCH_MAX_OPERATIONS, { error: `operations must hold at most ${BATCH_MAX_OPERATIONS} operations; split the work into several batches.` });

const atomicField = booleanField("atomic").optional().meta({ description: "All or nothing (default false)." });

/** The envelope of POST /v1/ext/items/batch as the server parses it first (operations checked one by one after). */
export const ItemBatchEnvelopeSchema = strictBody({ operations: operationsField(z.unknown()), atomic: atomicField });
/** The envelope of POST /v1/ext/tasks/batch. */
export const TaskBatchEnvelopeSchema = ItemBatchEnvelopeSchema;
/** A parsed envelope: the raw operations and `atomic`. */
export type BatchEnvelope = z.infer<typeof ItemBatchEnvelopeSchema>;

/** Body of POST /v1/ext/items/batch, fully stated (OpenAPI). */
export const ItemBatchRequestSchema = strictBody({ operations: operationsField(ItemBatchOperationSchema), atomic: atomicField });
/** Body of POST /v1/ext/tasks/batch, fully stated (OpenAPI). */
export const TaskBatchRequestSchema = strictBody({ operations: operationsField(TaskBatchOperationSchema), atomic: atomicField });
export type ItemBatchRequest = z.input<typeof ItemBatchRequestSchema>;
export type TaskBatchRequest = z.input<typeof TaskBatchRequestSchema>;

const resultShape = {
  index: z.number().int().meta({ description: "Position of the operation in `operations`, from 0." }),
  ref: z.string().nullable().meta({ description: "The operation's `ref`, or null." }),
  status: z.number().int().meta({
    description: "What the operation alone would have answered (201, 200, 204, 4xx); 424 in a failed atomic batch for the operations that did not fail.",
  }),
  problem: ProblemSchema.nullable().meta({ description: "The problem the operation alone would have answered, or null." }),
};

/** One result of an items batch. `upsert` (upsert operations that succeeded): what `Stageline-Upsert` would say. */
export const ItemBatchResultSchema = z.object({
  ...resultShape,
  item: ItemSchema.nullable(),
  upsert: z.enum(UPSERT_RESULTS).optional(),
});
export type ItemBatchResult = z.infer<typeof ItemBatchResultSchema>;
/** One result of a tasks batch. */
export const TaskBatchResultSchema = z.object({ ...resultShape, task: TaskSchema.nullable() });
export type TaskBatchResult = z.infer<typeof TaskBatchResultSchema>;

/** `200` body of POST /v1/ext/items/batch: one result per operation, in operation order. */
export const ItemBatchResponseSchema = z.object({ results: z.array(ItemBatchResultSchema) });
/** `200` body of POST /v1/ext/tasks/batch. */
export const TaskBatchResponseSchema = z.object({ results: z.array(TaskBatchResultSchema) });
export type ItemBatchResponse = z.infer<typeof ItemBatchResponseSchema>;
export type TaskBatchResponse = z.infer<typeof TaskBatchResponseSchema>;

/** A 422 `batch_failed` body: the problem plus the same `results` (the failed operation, the others 424). */
export const ItemBatchFailedSchema = ProblemSchema.extend({ results: z.array(ItemBatchResultSchema) });
export const TaskBatchFailedSchema = ProblemSchema.extend({ results: z.array(TaskBatchResultSchema) });

/** A parsed items-batch operation, with the body its single request takes. */
export type ItemBatchOperation =
  | { op: "create"; ref: string | null; body: ItemCreate }
  | { op: "upsert"; ref: string | null; body: ItemCreate }
  | { op: "update"; ref: string | null; itemId: string; body: ItemUpdate }
  | { op: "delete"; ref: string | null; itemId: string; version: number | undefined };

/** A parsed tasks-batch operation. */
export type TaskBatchOperation =
  | { op: "create"; ref: string | null; body: TaskCreate }
  | { op: "update"; ref: string | null; taskId: string; body: TaskUpdate };

/** An operation that failed its schema: its `ref` when one could be read, and the 400 problem's field errors. */
export interface InvalidBatchOperation {
  invalid: true;
  ref: string | null;
  errors: Problem["errors"] & object;
}

const ITEM_OP_SCHEMAS = {
  create: ItemBatchCreateSchema,
  update: ItemBatchUpdateSchema,
  upsert: ItemBatchUpsertSchema,
  delete: ItemBatchDeleteSchema,
} as const;

const TASK_OP_SCHEMAS = { create: TaskBatchCreateSchema, update: TaskBatchUpdateSchema } as const;

/** The `ref` of a raw operation when it is a valid one, else null. */
function refOf(raw: unknown): string | null {
  const ref = (raw as { ref?: unknown } | null)?.ref;
  return refField.safeParse(ref).success && typeof ref === "string" ? ref : null;
}

/** Parses one raw operation with the schema of its `op`; an unknown or missing `op` is a failure on `op`. */
function parseOperation<K extends string>(
  schemas: Record<K, z.ZodType>,
  raw: unknown,
): { op: K; value: Record<string, unknown> } | InvalidBatchOperation {
  const ref = refOf(raw);
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return { invalid: true, ref, errors: [{ path: "", message: "An operation must be a JSON object." }] };
  }
  const op = (raw as { op?: unknown }).op;
  const names = Object.keys(schemas) as K[];
  if (typeof op !== "string" || !names.includes(op as K)) {
    const message = `op must be one of ${names.map((n) => `"${n}"`).join(", ")}.`;
    return { invalid: true, ref, errors: [{ path: "op", message: op === undefined ? `op is required; ${message}` : message }] };
  }
  const result = schemas[op as K].safeParse(raw);
  if (!result.success) return { invalid: true, ref, errors: toFieldErrors(result.error) };
  return { op: op as K, value: result.data as Record<string, unknown> };
}

/** Splits a parsed operation into its `op`, `ref`, the named id fields and the rest (the single request's body). */
function split(value: Record<string, unknown>, ids: readonly string[]) {
  const { op: _op, ref, ...rest } = value;
  const picked: Record<string, unknown> = {};
  for (const id of ids) {
    picked[id] = rest[id];
    delete rest[id];
  }
  return { ref: (ref as string | undefined) ?? null, picked, body: rest };
}

/**
 * CONTRACT "Batch writes": parses one operation of an items batch (messages as the single requests').
 * @returns the operation, or `InvalidBatchOperation` (its 400 in `results`).
 */
export function parseItemBatchOperation(raw: unknown): ItemBatchOperation | InvalidBatchOperation {
  const parsed = parseOperation(ITEM_OP_SCHEMAS, raw);
  if ("invalid" in parsed) return parsed;
  switch (parsed.op) {
    case "create":
    case "upsert": {
      const { ref, body } = split(parsed.value, []);
      return { op: parsed.op, ref, body: body as ItemCreate };
    }
    case "update": {
      const { ref, picked, body } = split(parsed.value, ["item_id"]);
      return { op: "update", ref, itemId: picked.item_id as string, body: body as ItemUpdate };
    }
    case "delete": {
      const { ref, picked } = split(parsed.value, ["item_id", "version"]);
      return { op: "delete", ref, itemId: picked.item_id as string, version: picked.version as number | undefined };
    }
  }
}

/**
 * CONTRACT "Batch writes": parses one operation of a tasks batch.
 * @returns the operation, or `InvalidBatchOperation` (its 400 in `results`).
 */
export function parseTaskBatchOperation(raw: unknown): TaskBatchOperation | InvalidBatchOperation {
  const parsed = parseOperation(TASK_OP_SCHEMAS, raw);
  if ("invalid" in parsed) return parsed;
  if (parsed.op === "create") {
    const { ref, body } = split(parsed.value, []);
    return { op: "create", ref, body: body as TaskCreate };
  }
  const { ref, picked, body } = split(parsed.value, ["task_id"]);
  return { op: "update", ref, taskId: picked.task_id as string, body: body as TaskUpdate };
}

/**
 * Batch endpoints under /v1/ext (CONTRACT "Batch writes (scripts under the 60-per-60-seconds limit)"):
 * - POST /items/batch (items:write): `{ operations: [{ op: "create" | "update" | "upsert" | "delete", ref?, item_id?,
 *   version?, ...body }], atomic? }`, 1..100 operations;
 * - POST /tasks/batch (tasks:write): the same with `create` and `update` (`task_id`).
 * `200 { results }` in operation order, or `422 batch_failed` with `results` for a failed atomic batch. One request for
 * the rate limit; takes an `Idempotency-Key` over the whole batch (http/idempotency.ts). An envelope that fails its
 * schema is a 400 for the whole request; an operation that fails its own is that operation's 400 in `results`.
 * Thin: the envelope is parsed here, the rest is services/batch.ts.
 */
import { Router, type Request } from "express";
import { ItemBatchEnvelopeSchema, TaskBatchEnvelopeSchema, parseInput } from "@stageline/shared";
import type { AppContext } from "../context";
import { authOf, requireScope } from "../http/auth";
import { actorOfAuth } from "../services/api-keys";
import { idempotentCreate } from "../http/idempotency";
import { runItemBatch, runTaskBatch, type BatchCaller } from "../services/batch";

/** The caller of a batch request. */
function callerOf(req: Request): BatchCaller {
  const auth = authOf(req);
  return { companyId: auth.company.id, keyId: auth.keyId, actor: actorOfAuth(auth), ip: req.ip ?? null };
}

/** Routes under /v1/ext for batches (mounted before the item and task routes: `batch` is never an id). */
export function batchRouter(ctx: AppContext): Router {
  const router = Router();

  const batches = [
    { path: "/items/batch", scope: "items:write", envelope: ItemBatchEnvelopeSchema, run: runItemBatch },
    { path: "/tasks/batch", scope: "tasks:write", envelope: TaskBatchEnvelopeSchema, run: runTaskBatch },
  ] as const;
  for (const batch of batches) {
    router.post(
      batch.path,
      requireScope(batch.scope),
      idempotentCreate(ctx, async (req, claim) => batch.run(ctx, callerOf(req), parseInput(batch.envelope, req.body), claim)),
    );
  }

  return router;
}

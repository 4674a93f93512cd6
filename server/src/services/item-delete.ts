/**
 * Deleting an item (CONTRACT "Item deletion and erasure"): `DELETE /v1/ext/items/{item_id}` and the console's
 * Delete run this one function. The deletion is final and erases every stored copy of the item's values; see
 * db/item-delete.ts for what one transaction does, and db/event-erasure.ts for the `item.deleted` body's own end.
 */
import {
  createProblem,
  type ItemDeletedEvent,
  resourceLocation,
  type TaskChangedEvent,
} from "@stageline/shared";
import type { AppContext } from "../context";
import { deleteItemAndErase, type DeletionEvent } from "../db/item-delete";
import * as items from "../db/items";
import * as pipelines from "../db/pipelines";
import { uuidv7 } from "../db/webhook-dispatch";
import { unknownApiKey } from "./api-keys";
import { auditRow, type AuditActor } from "./audit-log";
import { domainError, notFound } from "./errors";
import { toItemResponse } from "./item-format";
import { toIsoTimestamp } from "./iso-timestamp";
import { toTaskResponse } from "./task-format";
import { toUser } from "./user-directory";

/** Who deletes: the API key or the console user (audit log), and from where. */
export interface DeletionRequest {
  actor: AuditActor;
  /** Client IP (`req.ip`), or null. */
  ip: string | null;
  /** The version the caller expects (optimistic locking, as PATCH), or undefined for none. */
  version?: number | undefined;
}

/** What was deleted: enough for a confirmation message, never a field value but the `short_id`. */
export interface DeletedItem {
  itemId: string;
  shortId: string;
  /** Tasks unlinked (`item_id` now null). */
  unlinkedTasks: number;
}

/** `last_error` of an earlier delivery of the item that was still pending when it was deleted. */
const ENDED_REASON = "item deleted: its payload was erased before this delivery was sent";

/**
 * CONTRACT "Item deletion and erasure": deletes the company's item `itemId`. In one transaction (db/item-delete.ts
 * `deleteItemAndErase`) the item row is locked, the `item.deleted` body (the item's last state, built from the locked
 * row, plus `deleted_at` and `deleted_note_ids`, the ids of its notes, deleted and erased with it) and one `task.updated` per linked task (`changed_fields: ["item_id"]`, `previous: { item_id }`)
 * are written with their deliveries (outbox), the tasks are unlinked, every earlier copy of the item's values is
 * erased (event bodies, pending deliveries ended, response excerpts, stored Idempotency-Key responses replaced by a
 * `410 payload_erased` problem), the audit entry (who, when, `short_id`; no field values) is stored and the row is
 * deleted. Its `short_id` is never reused (the pipeline's sequence only moves forward).
 * @returns the deleted item's id and `short_id`, and how many tasks were unlinked.
 * @throws DomainError 404 `not_found` (unknown, another company's, or deleted meanwhile: of two concurrent deletes
 * one gets this); 409 `version_conflict` with `current_version` when `request.version` is not the current version;
 * 401 `invalid_api_key` when the company was deleted while the request ran.
 */
export async function deleteItem(ctx: AppContext, companyId: string, itemId: string, request: DeletionRequest): Promise<DeletedItem> {
  const current = await items.readItem(ctx.prisma, companyId, itemId);
  if (!current) throw notFound("Item", itemId);
  const structure = await pipelines.findPipelineStructure(ctx.prisma, companyId, current.pipeline.id);
  if (!structure) throw notFound("Item", itemId);
  const deletedAt = new Date();
  const stamp = deletedAt.getTime();
  const outcome = await deleteItemAndErase(ctx.prisma, {
    companyId,
    itemId,
    expectedVersion: request.version,
    structure,
    deletedAt,
    location: resourceLocation("items", itemId),
    erasedReplay: JSON.stringify(
      createProblem("payload_erased", `Item ${itemId}, which this request created or changed, was deleted; its stored response was erased with it.`),
    ),
    endedReason: ENDED_REASON,
    audit: auditRow({
      companyId,
      actor: request.actor,
      action: "item.deleted",
      target: { type: "item", id: itemId, label: current.shortId },
      ip: request.ip,
    }),
    noteLocation: (noteId) => resourceLocation("notes", noteId),
    events: (item, tasks, noteIds) => {
      const deleted: ItemDeletedEvent = { ...toItemResponse(item), deleted_at: toIsoTimestamp(deletedAt), deleted_note_ids: noteIds };
      const events: DeletionEvent[] = [{ id: uuidv7(stamp), type: "item.deleted", resourceId: item.id, payload: deleted }];
      for (const task of tasks) {
        const payload: TaskChangedEvent = {
          ...toTaskResponse({ ...task, itemId: null, updatedAt: deletedAt }, task.assignee && toUser(task.assignee)),
          changed_fields: ["item_id"],
          previous: { item_id: item.id },
        };
        events.push({ id: uuidv7(stamp), type: "task.updated", resourceId: task.id, payload });
      }
      return events;
    },
  });
  if (!outcome.deleted) {
    if (outcome.reason !== "version_conflict") throw outcome.reason === "no_company" ? unknownApiKey() : notFound("Item", itemId);
    throw domainError(
      "version_conflict",
      `Item ${itemId} is at version ${outcome.currentVersion}, not ${request.version}: it was changed since you read it. Fetch it again before deleting it.`,
      { current_version: outcome.currentVersion },
    );
  }
  if (outcome.deliveries > 0) ctx.eventsCommitted();
  return { itemId, shortId: outcome.item.shortId, unlinkedTasks: outcome.tasks.length };
}

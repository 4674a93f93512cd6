/**
 * Data access for deleting an item and erasing its values (CONTRACT "Item deletion and erasure"): one transaction
 * that locks the item, lets the caller build the `item.deleted` and `task.updated` bodies from the locked row, then
 * erases every stored copy of the item's values, unlinks its tasks, deletes the row and writes the events (outbox).
 */
import type { PrismaClient } from "../generated/prisma/client";
import type { AuditEventInsert } from "./audit-log";
import { eraseEventsOf, eraseUndeliveredDeletionEvents, lockQueuesOfPendingDeliveries, type ErasureScope } from "./event-erasure";
import type { ItemRecord } from "./item-record";
import { lockItemForUpdate } from "./items";
import { eraseStoredNoteResponses, lockNotesOfItem } from "./notes";
import { ACTOR_COLUMNS, actorParam, actorValues, eventOrderLockCte, fanOutCtes } from "./outbox";
import type { PipelineStructure } from "./pipelines";
import { sqlOf, type TransactionQuery } from "./sql";
import { lockTasksOfItem, type StoredTask } from "./tasks";
import { uuidv7 } from "./webhook-dispatch";

/** An outbox event of a deletion, about the resource `resourceId` (the item, or one of its tasks). */
export interface DeletionEvent {
  id: string;
  type: string;
  resourceId: string;
  /** Stored as `JSON.stringify` writes it. */
  payload: unknown;
}

/** What `deleteItemAndErase` needs besides the item's id. */
export interface ItemDeletion {
  companyId: string;
  itemId: string;
  /** The version the client expects (optimistic locking), or undefined for none. */
  expectedVersion: number | undefined;
  /** The item's pipeline (read before the transaction; `lockItemForUpdate`). */
  structure: PipelineStructure;
  deletedAt: Date;
  /** `location` of the stored Idempotency-Key responses that created the item (`/v1/ext/items/{id}`). */
  location: string;
  /** JSON text stored in place of those responses (status 410). */
  erasedReplay: string;
  /** `last_error` of the item's earlier deliveries that were still pending (they end as failed). */
  endedReason: string;
  /** The audit entry of the deletion (no field values). */
  audit: AuditEventInsert;
  /**
   * Builds the events from the locked item, its locked linked tasks and the ids of its locked notes: `item.deleted`
   * first (with `deleted_note_ids`), then one `task.updated` per task. Runs inside the transaction: CPU only, no I/O.
   */
  events(item: ItemRecord, tasks: StoredTask[], noteIds: string[]): DeletionEvent[];
  /** `location` of the stored Idempotency-Key response that created note `noteId` (`/v1/ext/notes/{id}`). */
  noteLocation(noteId: string): string;
}

/** What a deletion did. */
export type ItemDeletionOutcome =
  | { deleted: true; item: ItemRecord; tasks: StoredTask[]; noteIds: string[]; deliveries: number }
  | { deleted: false; reason: "no_company" | "not_found" }
  | { deleted: false; reason: "version_conflict"; currentVersion: number };

/**
 * Deletes the company's item and erases its values, in ONE transaction (READ COMMITTED):
 * 1. locks the company row (`FOR KEY SHARE`, as every write), the item row `FOR UPDATE` (a concurrent PATCH, task
 *    link or second DELETE waits, then finds no item), its linked tasks and its notes `FOR UPDATE`; checks
 *    `expectedVersion`;
 * 2. builds the event bodies from those locked rows (`deletion.events`): no read-then-delete race;
 * 3. erases the item's earlier events (`item.*` with its id as `resource_id`, an index lookup) and its notes'
 *    earlier events (`note.*` with their ids; CONTRACT "Notes": no `note.deleted` per note, `item.deleted` lists
 *    `deleted_note_ids`, and the notes' stored create responses are replaced as below): body → `{ item_id, erased:
 *    true }` (`{ note_id, item_id, erased: true }` for a note's), `erased_at` set; ends their pending deliveries as failed (their queues locked
 *    first, in id order, as the dispatcher does) and clears their attempts' response excerpts (a target may echo
 *    the body back);
 * 4. replaces the stored Idempotency-Key responses that hold its values (its create's, found by `location`, an
 *    upsert's, found by `item_id`, and an items batch's whose results hold it, found in the body) with `erasedReplay` (410),
 *    records the audit entry, unlinks the tasks (`item_id` null), deletes the row (its notes go by cascade), and writes the events with one
 *    delivery per subscriber (outbox); a subscription filtered by pipeline gets the tasks' `task.updated` when the
 *    deleted item was in that pipeline (the pipeline the tasks were linked to; their bodies carry `item_id: null`). An `item.deleted` that no active subscription receives (none subscribed, or
 *    every filter excludes it) is erased right after, in the same transaction; otherwise its body is erased when
 *    its last delivery ends (db/event-erasure.ts).
 * @returns `deleted` with the locked item and tasks and the deliveries queued; else why nothing was written.
 * @throws the driver's error (the transaction is rolled back).
 */
export function deleteItemAndErase(prisma: PrismaClient, deletion: ItemDeletion): Promise<ItemDeletionOutcome> {
  return sqlOf(prisma).transaction(async (q) => {
    const company = await q<{ id: string }>(`SELECT id FROM companies WHERE id = $1 FOR KEY SHARE`, [deletion.companyId]);
    if (company.length === 0) return { deleted: false, reason: "no_company" };
    const item = await lockItemForUpdate(q, deletion.companyId, deletion.itemId, deletion.structure);
    if (!item) return { deleted: false, reason: "not_found" };
    if (deletion.expectedVersion !== undefined && deletion.expectedVersion !== item.version) {
      return { deleted: false, reason: "version_conflict", currentVersion: item.version };
    }
    const tasks = await lockTasksOfItem(q, deletion.companyId, item.id);
    const noteIds = await lockNotesOfItem(q, deletion.companyId, item.id);
    const events = deletion.events(item, tasks, noteIds);
    const itemScope: ErasureScope = { companyId: deletion.companyId, resourceIds: [item.id], typePrefix: "item." };
    const noteScope: ErasureScope = { companyId: deletion.companyId, resourceIds: noteIds, typePrefix: "note." };
    await lockQueuesOfPendingDeliveries(q, itemScope);
    await lockQueuesOfPendingDeliveries(q, noteScope);
    await eraseEventsOf(q, itemScope, deletion.deletedAt, deletion.endedReason);
    await eraseEventsOf(q, noteScope, deletion.deletedAt, deletion.endedReason);
    await eraseStoredNoteResponses(q, deletion.companyId, noteIds.map(deletion.noteLocation), deletion.erasedReplay);
    const deliveries = await deleteAndWriteEvents(q, deletion, item.pipeline.id, tasks, events);
    return { deleted: true, item, tasks, noteIds, deliveries };
  });
}

/**
 * Step 4 of `deleteItemAndErase`; `pipelineId` is the locked item's pipeline, which the fan-out gives the unlinked
 * tasks' events. @returns the number of deliveries queued.
 */
async function deleteAndWriteEvents(
  q: TransactionQuery,
  deletion: ItemDeletion,
  pipelineId: string,
  tasks: StoredTask[],
  events: DeletionEvent[],
): Promise<number> {
  const a = deletion.audit;
  const rows = await q<{ deleted: number; deliveries: number }>(
    `WITH replays AS (
       UPDATE idempotency_keys SET status = 410, response_body = $5, location = NULL, response_headers = NULL, item_id = NULL
       WHERE company_id = $1 AND (location = $4 OR item_id = $2
         -- an items batch's stored response (CONTRACT "Batch writes"): each result carries the item as "item":{"item_id":...
         OR (location IS NULL AND item_id IS NULL AND strpos(response_body, '"item":{"item_id":' || to_json($2::text)::text) > 0))
       RETURNING key
     ), audited AS (
       INSERT INTO audit_events (id, company_id, actor_type, actor_id, actor_label, action, target_type, target_id,
         target_label, ip, details, created_at)
       VALUES ($11, $1, $12, $13, $14, $15, $16, $17, $18, $19, $20::jsonb, $3::timestamptz)
       RETURNING id
     ), unlinked AS (
       UPDATE tasks SET item_id = NULL, updated_at = $3::timestamptz
       WHERE company_id = $1 AND id = ANY ($6::text[]) AND item_id = $2
       RETURNING id
     ), gone AS (
       DELETE FROM items WHERE id = $2 AND company_id = $1
       RETURNING id
     ), ${eventOrderLockCte("new_events_order", "$1")}, new_events AS (
       INSERT INTO webhook_events (id, company_id, type, resource_id, payload, ${ACTOR_COLUMNS})
       SELECT e.id, $1, e.type, e.resource_id, e.payload::json, ${actorValues("$22::text")}
       FROM new_events_order CROSS JOIN unnest($7::text[], $8::text[], $9::text[], $10::text[]) WITH ORDINALITY AS e(id, type, resource_id, payload, n)
       WHERE EXISTS (SELECT 1 FROM gone)
       ORDER BY e.n
       RETURNING id, type, seq, payload
     ), ${fanOutCtes("new_events", "$1", "$21")}
     SELECT (SELECT count(*) FROM gone)::int AS deleted, (SELECT count(*) FROM queued)::int AS deliveries,
       (SELECT count(*) FROM replays)::int AS replays, (SELECT count(*) FROM audited)::int AS audited`,
    [
      deletion.companyId,
      deletion.itemId,
      deletion.deletedAt,
      deletion.location,
      deletion.erasedReplay,
      tasks.map((t) => t.id),
      events.map((e) => e.id),
      events.map((e) => e.type),
      events.map((e) => e.resourceId),
      events.map((e) => JSON.stringify(e.payload)),
      uuidv7(deletion.deletedAt.getTime()),
      a.actorType,
      a.actorId,
      a.actorLabel,
      a.action,
      a.targetType,
      a.targetId,
      a.targetLabel,
      a.ip,
      JSON.stringify(a.details),
      pipelineId,
      actorParam(),
    ],
  );
  // An `item.deleted` that no active subscription's filter let through has no delivery to wait for: erase it now,
  // in the same transaction (a sibling CTE could not see the row the statement above inserted).
  const deletedEventIds = events.filter((e) => e.type === "item.deleted").map((e) => e.id);
  await eraseUndeliveredDeletionEvents(q, deletion.companyId, deletedEventIds, deletion.deletedAt);
  return Number(rows[0]?.deliveries ?? 0);
}

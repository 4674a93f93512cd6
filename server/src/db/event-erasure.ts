/**
 * Erasure of event bodies (CONTRACT "Item deletion and erasure", "Notes": erasure covers notes): the earlier events
 * of a deleted item or note, and the `item.deleted` / `note.deleted` bodies once their deliveries end (the body is
 * kept only while its deliveries are pending, and erased as soon as the last one ends: delivered, failed for good,
 * or its subscription deleted). The erased body is `{ "item_id": "...", "erased": true }` for item events and
 * `{ "note_id": "...", "item_id": "...", "erased": true }` for note events (shared ErasedPayloadSchema,
 * ErasedNotePayloadSchema).
 */
import type { PrismaClient } from "../generated/prisma/client";
import { query, type TransactionQuery } from "./sql";

/** The deletion events whose bodies are kept only while their deliveries are pending. */
export const DELETION_EVENT_TYPES = ["item.deleted", "note.deleted"] as const;

/**
 * SQL: the erased body (`json`) of the `webhook_events` row aliased `alias`: its `resource_id` is the item's id for
 * item events; for note events it is the note's id, and `item_id` is kept from the body (an erased body keeps it too,
 * so erasing twice is harmless).
 */
export function ERASED_PAYLOAD_SQL(alias: string): string {
  return `(CASE WHEN ${alias}.type LIKE 'note.%'
    THEN '{"note_id":' || to_json(${alias}.resource_id)::text || ',"item_id":' || COALESCE(to_json(${alias}.payload::json ->> 'item_id')::text, 'null') || ',"erased":true}'
    ELSE '{"item_id":' || to_json(${alias}.resource_id)::text || ',"erased":true}' END)::json`;
}

/** SQL condition: the `webhook_events` row aliased `e` is an unerased event of `type` with no pending delivery left. */
const FINISHED = (type: (typeof DELETION_EVENT_TYPES)[number]) => `e.type = '${type}' AND e.erased_at IS NULL
  AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.state = 'pending')`;

/** The events of some resources of one company: those with one of `resourceIds` as `resource_id` and a name starting with `typePrefix` (`item.`, `note.`). */
export interface ErasureScope {
  companyId: string;
  resourceIds: string[];
  typePrefix: "item." | "note.";
}

/**
 * Before erasing: locks (`FOR NO KEY UPDATE`, in id order, as the dispatcher does) the subscriptions whose deliveries of
 * the scope's events are still pending, in a statement of its own. A dispatcher recording an attempt of one of them
 * holds that lock while it writes the attempt (db/webhook-dispatch.ts `recordAttempt`), so this waits for it to
 * commit, and the erasing statement that follows takes its snapshot after: it sees that attempt and clears its
 * response excerpt. (In one statement, the snapshot would predate the attempt and miss it.) An attempt recorded
 * after the deletion finds its delivery ended and stores no excerpt.
 */
export async function lockQueuesOfPendingDeliveries(q: TransactionQuery, scope: ErasureScope): Promise<void> {
  if (scope.resourceIds.length === 0) return;
  await q(
    `SELECT s.id FROM webhook_subscriptions s
     WHERE s.id IN (
       SELECT d.subscription_id FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
       WHERE e.company_id = $1 AND e.resource_id = ANY ($2::text[]) AND e.type LIKE $3 AND d.state = 'pending'
     )
     ORDER BY s.id FOR NO KEY UPDATE`,
    [scope.companyId, scope.resourceIds, `${scope.typePrefix}%`],
  );
}

/**
 * Erases the scope's earlier events (an index lookup on (company_id, resource_id)): body → the erased body,
 * `erased_at` set to `at`; ends their pending deliveries as failed with `endedReason` (their queues locked first, in
 * id order, as the dispatcher does) and clears their attempts' response excerpts (a target may echo the body back).
 */
export async function eraseEventsOf(q: TransactionQuery, scope: ErasureScope, at: Date, endedReason: string): Promise<void> {
  if (scope.resourceIds.length === 0) return;
  await q(
    `WITH scoped_events AS MATERIALIZED (
       SELECT id FROM webhook_events WHERE company_id = $1 AND resource_id = ANY ($2::text[]) AND type LIKE $5
     ), pending AS MATERIALIZED (
       SELECT d.id, d.subscription_id FROM webhook_deliveries d
       WHERE d.event_id IN (SELECT id FROM scoped_events) AND d.state = 'pending'
     ), queues AS (
       SELECT s.id FROM webhook_subscriptions s WHERE s.id IN (SELECT subscription_id FROM pending) ORDER BY s.id FOR NO KEY UPDATE
     ), ended AS (
       UPDATE webhook_deliveries d SET state = 'failed', completed_at = $3::timestamptz, last_error = $4,
         locked_until = NULL, locked_by = NULL
       WHERE d.id IN (SELECT id FROM pending) AND d.subscription_id IN (SELECT id FROM queues) AND d.state = 'pending'
       RETURNING d.id
     ), excerpts AS (
       UPDATE webhook_attempts a SET response_excerpt = NULL
       FROM webhook_deliveries d
       WHERE d.event_id IN (SELECT id FROM scoped_events) AND a.delivery_id = d.id AND a.response_excerpt IS NOT NULL
       RETURNING a.id
     ), erased AS (
       UPDATE webhook_events e SET payload = ${ERASED_PAYLOAD_SQL("e")}, erased_at = COALESCE(e.erased_at, $3::timestamptz)
       WHERE e.id IN (SELECT id FROM scoped_events)
       RETURNING e.id
     )
     SELECT (SELECT count(*) FROM ended)::int AS ended, (SELECT count(*) FROM excerpts)::int AS excerpts,
       (SELECT count(*) FROM erased)::int AS erased`,
    [scope.companyId, scope.resourceIds, at, endedReason, `${scope.typePrefix}%`],
  );
}

/**
 * Erases, inside the caller's transaction, the deletion events `eventIds` of company `companyId` that got no
 * delivery (no active subscription's filter let them through): there is nothing to wait for. Run as its own
 * statement after the one that inserted them (a sibling CTE could not see those rows).
 */
export async function eraseUndeliveredDeletionEvents(q: TransactionQuery, companyId: string, eventIds: string[], at: Date): Promise<void> {
  if (eventIds.length === 0) return;
  await q(
    `UPDATE webhook_events e SET payload = ${ERASED_PAYLOAD_SQL("e")}, erased_at = $2::timestamptz
     WHERE e.company_id = $3 AND e.id = ANY ($1::text[])
       AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)`,
    [eventIds, at, companyId],
  );
}

/**
 * The CTE `excerpts`: clears the response excerpts of the attempts of the deliveries of the events of the CTE
 * `erased` (column `id`): a target may have echoed the body back.
 */
const EXCERPTS_CTE = `excerpts AS (
       UPDATE webhook_attempts a SET response_excerpt = NULL
       FROM webhook_deliveries d
       WHERE d.event_id IN (SELECT id FROM erased) AND a.delivery_id = d.id AND a.response_excerpt IS NOT NULL
     )`;

/**
 * Erases the body of the `item.deleted` or `note.deleted` event of delivery `deliveryId` when none of its
 * deliveries is pending any more. Called by the delivery engine after it recorded an attempt that ended a delivery of an `item.deleted`
 * event, as its own statement (a new snapshot, after that commit): of two deliveries of one event ending at the
 * same time in two processes, the later statement sees both ended. Anything missed (a crash between the two) is
 * caught by `eraseFinishedDeletedItemEvents`.
 * @returns whether the body was erased now.
 */
export async function eraseDeletedItemEventIfFinished(prisma: PrismaClient, deliveryId: string): Promise<boolean> {
  const rows = await query<{ id: string }>(
    prisma,
    `WITH erased AS (
       UPDATE webhook_events e SET payload = ${ERASED_PAYLOAD_SQL("e")}, erased_at = now()
       WHERE e.id = (SELECT event_id FROM webhook_deliveries WHERE id = $1)
         AND (${FINISHED("item.deleted")} OR ${FINISHED("note.deleted")})
       RETURNING e.id
     ), ${EXCERPTS_CTE}
     SELECT id FROM erased`,
    [deliveryId],
    { name: "erase-deleted-item-event" },
  );
  return rows.length > 0;
}

/**
 * Erases the bodies of up to `limit` `item.deleted` and `note.deleted` events (item ones first, then notes' up to the
 * rest of `limit`, so a result of `limit` means more may be left), whose deliveries are all over or gone (a subscription
 * deleted by unsubscribe, by the console or by a target's `410 Gone`, or disabled): those of company `companyId`
 * (after that company's subscription went), or of every company (the retention job's safety net, when `companyId`
 * is null). Walks the partial indexes of unerased `item.deleted` events (migration 20261126100000_item_delete_erasure)
 * and of unerased `note.deleted` events (migration 20261127600000_notes), both on (company_id, created_at), which hold
 * only the deletions whose deliveries are still pending: a company's sweep
 * reads that company's rows only, so one company's backlog of pending deliveries never slows another's unsubscribe.
 * @returns how many bodies were erased.
 */
export async function eraseFinishedDeletedItemEvents(prisma: PrismaClient, companyId: string | null, limit = 500): Promise<number> {
  let erased = 0;
  for (const type of DELETION_EVENT_TYPES) {
    if (erased >= limit) break;
    erased += await eraseFinishedOfType(prisma, type, companyId, limit - erased);
  }
  return erased;
}

/** `eraseFinishedDeletedItemEvents` for one event name (each walks its own partial index). */
async function eraseFinishedOfType(
  prisma: PrismaClient,
  type: (typeof DELETION_EVENT_TYPES)[number],
  companyId: string | null,
  limit: number,
): Promise<number> {
  const rows = await query<{ id: string }>(
    prisma,
    `WITH erased AS (
       UPDATE webhook_events e SET payload = ${ERASED_PAYLOAD_SQL("e")}, erased_at = now()
       WHERE e.id IN (
         SELECT e.id FROM webhook_events e
         WHERE ${FINISHED(type)} AND ($2::text IS NULL OR e.company_id = $2::text)
         ORDER BY e.created_at LIMIT $1::int FOR UPDATE SKIP LOCKED
       ) AND ${FINISHED(type)}
       RETURNING e.id
     ), ${EXCERPTS_CTE}
     SELECT id FROM erased`,
    [limit, companyId],
  );
  return rows.length;
}

/** Whether the event `eventId` has been erased (its body no longer holds values: a redeliver of it is 410). */
export async function isEventErased(prisma: PrismaClient, eventId: string): Promise<boolean> {
  const rows = await query<{ erased: boolean }>(prisma, `SELECT erased_at IS NOT NULL AS erased FROM webhook_events WHERE id = $1`, [eventId]);
  return rows[0]?.erased === true;
}

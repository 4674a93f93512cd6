/**
 * Erasure of `item.deleted` bodies once their deliveries end (CONTRACT "Item deletion and erasure": the body is kept
 * only while its deliveries are pending, and erased as soon as the last one ends: delivered, failed for good, or its
 * subscription deleted). The erased body is `{ "item_id": "...", "erased": true }` (shared ErasedPayloadSchema).
 */
import type { PrismaClient } from "../generated/prisma/client";
import { query } from "./sql";

/** SQL: the erased body (`json`) of the `webhook_events` row aliased `alias` (its `resource_id` is the item's id). */
export function ERASED_PAYLOAD_SQL(alias: string): string {
  return `('{"item_id":' || to_json(${alias}.resource_id)::text || ',"erased":true}')::json`;
}

/** SQL condition: the `webhook_events` row aliased `e` is an unerased `item.deleted` with no pending delivery left. */
const FINISHED = `e.type = 'item.deleted' AND e.erased_at IS NULL
  AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.state = 'pending')`;

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
 * Erases the body of the `item.deleted` event of delivery `deliveryId` when none of its deliveries is pending any
 * more. Called by the delivery engine after it recorded an attempt that ended a delivery of an `item.deleted`
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
       WHERE e.id = (SELECT event_id FROM webhook_deliveries WHERE id = $1) AND ${FINISHED}
       RETURNING e.id
     ), ${EXCERPTS_CTE}
     SELECT id FROM erased`,
    [deliveryId],
    { name: "erase-deleted-item-event" },
  );
  return rows.length > 0;
}

/**
 * Erases the bodies of up to `limit` `item.deleted` events whose deliveries are all over or gone (a subscription
 * deleted by unsubscribe, by the console or by a target's `410 Gone`, or disabled): those of company `companyId`
 * (after that company's subscription went), or of every company (the retention job's safety net, when `companyId`
 * is null). Walks the partial index of unerased `item.deleted` events (migration 20261126100000_item_delete_erasure,
 * on (company_id, created_at)), which holds only the deletions whose deliveries are still pending: a company's sweep
 * reads that company's rows only, so one company's backlog of pending deliveries never slows another's unsubscribe.
 * @returns how many bodies were erased.
 */
export async function eraseFinishedDeletedItemEvents(prisma: PrismaClient, companyId: string | null, limit = 500): Promise<number> {
  const rows = await query<{ id: string }>(
    prisma,
    `WITH erased AS (
       UPDATE webhook_events e SET payload = ${ERASED_PAYLOAD_SQL("e")}, erased_at = now()
       WHERE e.id IN (
         SELECT e.id FROM webhook_events e
         WHERE ${FINISHED} AND ($2::text IS NULL OR e.company_id = $2::text)
         ORDER BY e.created_at LIMIT $1::int FOR UPDATE SKIP LOCKED
       ) AND ${FINISHED}
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

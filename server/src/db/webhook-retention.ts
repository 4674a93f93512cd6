/**
 * Deletion of the old webhook delivery log (CONTRACT.md "Events and deliveries", Retention; the policy is
 * webhooks/retention-policy.ts). Two batch statements, each one short autocommitted statement on the raw runner
 * (db/sql.ts) that deletes by primary key:
 *
 * - `purgeEndedDeliveries`: deliveries in state `succeeded` or `failed` that ended before the cutoff, with their
 *   attempts. Pending deliveries are never selected.
 * - `purgeUnreferencedEvents`: events created before the cutoff that no delivery references any more (so none
 *   pending), walking the events in (created_at, id) order from a cursor so that each statement examines at most
 *   `batch` events, however many old events are still referenced.
 *
 * Indexes (migration 20261124300000_webhook_retention): `webhook_deliveries (completed_at) WHERE state IN
 * ('succeeded', 'failed')` finds ended deliveries without reading pending or young ones; `webhook_deliveries
 * (event_id)` answers "is any delivery of this event left?" and the ON DELETE CASCADE check of each deleted event;
 * `webhook_events (created_at, id)` is the events' walk.
 */
import type { PrismaClient } from "../generated/prisma/client";
import { query } from "./sql";

/** Rows deleted by one `purgeEndedDeliveries` call. */
export interface PurgedDeliveries {
  deliveries: number;
  attempts: number;
}

/**
 * Deletes at most `batch` deliveries in state `succeeded` or `failed` whose `completed_at` is before `cutoff`, and
 * all their attempts, in one statement. Rows are locked `FOR UPDATE SKIP LOCKED` before they are deleted: another
 * process's purge takes other rows, and a delivery that a concurrent redeliver has just put back to `pending` is
 * re-checked under the lock and kept (that redeliver, if it comes second, finds nothing: 404).
 * @param cutoff deliveries that ended strictly before it go.
 * @param batch rows at most (positive).
 * @returns the deliveries and attempts deleted; fewer than `batch` deliveries means none was left.
 */
export async function purgeEndedDeliveries(prisma: PrismaClient, cutoff: Date, batch: number): Promise<PurgedDeliveries> {
  const rows = await query<{ deliveries: number; attempts: number }>(
    prisma,
    `WITH doomed AS (
       SELECT id FROM webhook_deliveries
       WHERE state IN ('succeeded', 'failed') AND completed_at < $1::timestamptz
       LIMIT $2::int
       FOR UPDATE SKIP LOCKED
     ), attempts AS (
       DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT id FROM doomed) RETURNING 1
     ), deliveries AS (
       DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM doomed) RETURNING 1
     )
     SELECT (SELECT count(*) FROM deliveries)::int AS deliveries, (SELECT count(*) FROM attempts)::int AS attempts`,
    [cutoff, batch],
    { name: "webhook-retention-deliveries" },
  );
  return { deliveries: Number(rows[0]?.deliveries ?? 0), attempts: Number(rows[0]?.attempts ?? 0) };
}

/** Where `purgeUnreferencedEvents` resumes: the (created_at, id) of the last event examined. */
export interface EventCursor {
  createdAt: Date;
  id: string;
}

/** What one `purgeUnreferencedEvents` call did. */
export interface PurgedEvents {
  /** Events deleted. */
  events: number;
  /** The last event examined, to pass as `after` next time; null when no event before the cutoff was left to examine. */
  next: EventCursor | null;
}

/**
 * Examines the next `batch` events created before `cutoff` (in created_at, id order, strictly after `after`) and
 * deletes those that no delivery references, in one statement. An event with a delivery left (pending, or ended
 * after the cutoff) is kept. Deliveries are only ever queued in their event's own statement, so no new delivery can
 * come to reference an event this old; the deleted events are locked `FOR UPDATE SKIP LOCKED` all the same, so two
 * processes never wait on each other.
 * @param after null to start with the oldest event.
 * @param batch events examined at most (positive).
 */
export async function purgeUnreferencedEvents(
  prisma: PrismaClient,
  cutoff: Date,
  after: EventCursor | null,
  batch: number,
): Promise<PurgedEvents> {
  const rows = await query<{ events: number; last_created_at: Date | null; last_id: string | null }>(
    prisma,
    `WITH examined AS (
       SELECT id, created_at FROM webhook_events
       WHERE created_at < $1::timestamptz AND (created_at, id) > ($2::timestamptz, $3::text)
       ORDER BY created_at, id
       LIMIT $4::int
     ), doomed AS (
       SELECT e.id FROM webhook_events e
       WHERE e.id IN (SELECT id FROM examined)
         AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)
       FOR UPDATE OF e SKIP LOCKED
     ), deleted AS (
       DELETE FROM webhook_events WHERE id IN (SELECT id FROM doomed) RETURNING 1
     ), last AS (
       SELECT created_at, id FROM examined ORDER BY created_at DESC, id DESC LIMIT 1
     )
     SELECT (SELECT count(*) FROM deleted)::int AS events,
       (SELECT created_at FROM last) AS last_created_at, (SELECT id FROM last) AS last_id`,
    // Before every event: -infinity and the empty string (the smallest text).
    [cutoff, after?.createdAt ?? "-infinity", after?.id ?? "", batch],
    { name: "webhook-retention-events" },
  );
  const row = rows[0];
  const next = row?.last_id != null && row.last_created_at != null ? { createdAt: new Date(row.last_created_at), id: row.last_id } : null;
  return { events: Number(row?.events ?? 0), next };
}

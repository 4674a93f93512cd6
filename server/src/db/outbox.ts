/** Data access for the transactional outbox (tables `webhook_events` and `webhook_deliveries`). */
import type { Prisma } from "../generated/prisma/client";

/** Inserts one outbox event; returns its id and commit-order `seq`. */
export function insertEvent(
  tx: Prisma.TransactionClient,
  event: { companyId: string; type: string; resourceId: string; payload: Prisma.InputJsonValue },
) {
  return tx.webhookEvent.create({ data: event, select: { id: true, seq: true } });
}

/**
 * The fan-out as data-modifying CTEs, for statements that write their events themselves (db/items.ts) and for
 * `fanOutEvent`: `subscribers` and `queued` queue one pending delivery per active subscription of the company given
 * by the SQL parameter `companyParam` (e.g. `$2`) to the name of each row of the CTE `eventsCte` (columns id, type,
 * seq). Append to a `WITH` list after `eventsCte`; `queued` returns one row per delivery.
 *
 * The subscriptions are read `FOR KEY SHARE`: an unsubscribe (or a 410 Gone) racing with the statement either
 * committed first (the subscription is skipped) or waits for this commit and then removes the new delivery with its
 * subscription (ON DELETE CASCADE) — never a foreign-key failure of the change itself.
 */
export function fanOutCtes(eventsCte: string, companyParam: string): string {
  return `subscribers AS (
       SELECT id, event FROM webhook_subscriptions
       WHERE company_id = ${companyParam} AND event IN (SELECT type FROM ${eventsCte}) AND disabled_at IS NULL
       FOR KEY SHARE
     ), queued AS (
       INSERT INTO webhook_deliveries (id, event_id, subscription_id, seq)
       SELECT gen_random_uuid()::text, ${eventsCte}.id, subscribers.id, ${eventsCte}.seq
       FROM ${eventsCte} JOIN subscribers ON subscribers.event = ${eventsCte}.type
       RETURNING id
     )`;
}

/**
 * Queues one pending delivery of a stored event per active subscription of that company and event name, in one
 * statement inside the caller's transaction (`fanOutCtes`).
 * @returns the number of deliveries queued.
 */
export async function fanOutEvent(
  tx: Prisma.TransactionClient,
  event: { id: string; seq: bigint; companyId: string; type: string },
): Promise<number> {
  const rows = await tx.$queryRawUnsafe<{ deliveries: number }[]>(
    `WITH event AS (SELECT $1::text AS id, $2::text AS type, $3::bigint AS seq), ${fanOutCtes("event", "$4")}
     SELECT count(*)::int AS deliveries FROM queued`,
    event.id,
    event.type,
    event.seq,
    event.companyId,
  );
  return Number(rows[0]?.deliveries ?? 0);
}

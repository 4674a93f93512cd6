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
 * Queues one pending delivery of an event per active subscription of that company and event name, in one
 * statement. The subscriptions are read `FOR KEY SHARE`: an unsubscribe (or a 410 Gone) racing with this
 * transaction either committed first (the subscription is skipped) or waits for this commit and then removes the
 * new delivery with its subscription (ON DELETE CASCADE) — never a foreign-key failure of the change itself.
 * @returns the number of deliveries queued.
 */
export async function fanOutEvent(
  tx: Prisma.TransactionClient,
  event: { id: string; seq: bigint; companyId: string; type: string },
): Promise<number> {
  return tx.$executeRaw`
    WITH subscribers AS (
      SELECT id FROM webhook_subscriptions
      WHERE company_id = ${event.companyId} AND event = ${event.type} AND disabled_at IS NULL
      FOR KEY SHARE
    )
    INSERT INTO webhook_deliveries (id, event_id, subscription_id, seq)
    SELECT gen_random_uuid()::text, ${event.id}, subscribers.id, ${event.seq} FROM subscribers`;
}

/**
 * Transactional outbox (CONTRACT.md "Events and deliveries"): `recordEvent` writes the event and one pending
 * delivery per active subscription of that company and event name, inside the caller's transaction, so the change
 * and its events commit or roll back together. After the commit the caller calls `ctx.eventsCommitted()` to wake
 * the dispatcher.
 */
import type { EventName } from "@stageline/shared";
import type { Prisma } from "../generated/prisma/client";

export interface OutboxEvent {
  companyId: string;
  type: EventName;
  /** Id of the item or task the event is about. */
  resourceId: string;
  /** The exact JSON body to deliver (item format or task format). */
  payload: Record<string, unknown>;
}

/**
 * Records one event and fans it out to the matching subscriptions (not disabled).
 * @returns the event id and how many deliveries were queued.
 */
export async function recordEvent(tx: Prisma.TransactionClient, event: OutboxEvent): Promise<{ eventId: string; deliveries: number }> {
  const row = await tx.webhookEvent.create({
    data: {
      companyId: event.companyId,
      type: event.type,
      resourceId: event.resourceId,
      payload: event.payload as Prisma.InputJsonValue,
    },
    select: { id: true, seq: true },
  });
  const subscriptions = await tx.webhookSubscription.findMany({
    where: { companyId: event.companyId, event: event.type, disabledAt: null },
    select: { id: true },
  });
  if (subscriptions.length) {
    await tx.webhookDelivery.createMany({
      data: subscriptions.map((s) => ({ eventId: row.id, subscriptionId: s.id, seq: row.seq })),
    });
  }
  return { eventId: row.id, deliveries: subscriptions.length };
}

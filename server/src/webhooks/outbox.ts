/**
 * Transactional outbox (CONTRACT.md "Events and deliveries"): `recordEvent` writes the event and one pending
 * delivery per active subscription of that company and event name, inside the caller's transaction, so the change
 * and its events commit or roll back together. After the commit the caller calls `ctx.eventsCommitted()` to wake
 * the dispatcher.
 */
import type { EventName } from "@stageline/shared";
import type { Prisma } from "../generated/prisma/client";
import { fanOutEvent, insertEvent } from "../db/outbox";

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
  const row = await insertEvent(tx, {
    companyId: event.companyId,
    type: event.type,
    resourceId: event.resourceId,
    payload: event.payload as Prisma.InputJsonValue,
  });
  const deliveries = await fanOutEvent(tx, { id: row.id, seq: row.seq, companyId: event.companyId, type: event.type });
  return { eventId: row.id, deliveries };
}

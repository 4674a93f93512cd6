/**
 * The delivery log of REST-hook subscriptions (tables `webhook_deliveries`, `webhook_attempts`, with the event name
 * from `webhook_events`), as read by GET /v1/ext/webhooks/{webhook_id}/deliveries, plus the one write the API makes
 * to it: putting a delivery back in the queue (redeliver). Sending, retries and attempt recording belong to the
 * dispatcher. Callers check first that the subscription belongs to their company.
 */
import type { Prisma, PrismaClient } from "../generated/prisma/client";
import { KEYSET_ORDER, keysetWhere, type KeysetPosition } from "./keyset";

/** A Prisma client or an interactive transaction. */
export type Db = PrismaClient | Prisma.TransactionClient;

/** What `listDeliveries` and `findDelivery` load: the delivery, its event's name and its attempts, newest first. */
export const DELIVERY_LOG_INCLUDE = {
  event: { select: { type: true } },
  attempts: { orderBy: [{ attemptedAt: "desc" }, { id: "desc" }] },
} satisfies Prisma.WebhookDeliveryInclude;

/** A delivery with its event name and attempts (newest first). */
export type DeliveryLogRow = Prisma.WebhookDeliveryGetPayload<{ include: typeof DELIVERY_LOG_INCLUDE }>;

/**
 * One page of a subscription's deliveries, newest first (created_at desc, id desc), strictly after `after`,
 * optionally only those in `state`. Fetches `take` rows; callers pass `limit + 1`.
 */
export function listDeliveries(
  db: Db,
  subscriptionId: string,
  filter: { state?: string; after?: KeysetPosition },
  take: number,
): Promise<DeliveryLogRow[]> {
  const where: Prisma.WebhookDeliveryWhereInput = { subscriptionId };
  if (filter.state !== undefined) where.state = filter.state;
  return db.webhookDelivery.findMany({
    where: { AND: [where, keysetWhere(filter.after)] },
    orderBy: KEYSET_ORDER,
    take,
    include: DELIVERY_LOG_INCLUDE,
  });
}

/** Delivery `deliveryId` of subscription `subscriptionId`, or null when it is not one of its deliveries. */
export function findDelivery(db: Db, subscriptionId: string, deliveryId: string): Promise<DeliveryLogRow | null> {
  return db.webhookDelivery.findFirst({ where: { id: deliveryId, subscriptionId }, include: DELIVERY_LOG_INCLUDE });
}

/**
 * Puts a delivery back in the queue to be sent again as soon as possible: state `pending`, `next_attempt_at = now`,
 * lease released (`locked_until`, `locked_by` null), `completed_at` null. Its attempts and `attempt_count` are kept.
 * @returns false when it is not a delivery of that subscription.
 */
export async function requeueDelivery(db: Db, subscriptionId: string, deliveryId: string, now: Date): Promise<boolean> {
  const { count } = await db.webhookDelivery.updateMany({
    where: { id: deliveryId, subscriptionId },
    data: { state: "pending", nextAttemptAt: now, lockedUntil: null, lockedBy: null, completedAt: null },
  });
  return count > 0;
}

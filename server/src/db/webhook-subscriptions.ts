/**
 * Data access for REST-hook subscriptions (table `webhook_subscriptions`). Every read and write is scoped to one
 * company, so another tenant's subscription reads as unknown (CONTRACT.md "Errors": 404).
 * Deleting a subscription cascades to its deliveries and their attempts (foreign keys `ON DELETE CASCADE`).
 */
import type { Prisma, PrismaClient, WebhookSubscription } from "../generated/prisma/client";
import { KEYSET_ORDER, keysetWhere, type KeysetPosition } from "./keyset";

/** A Prisma client or an interactive transaction. */
export type Db = PrismaClient | Prisma.TransactionClient;

/** The public columns of a subscription (no secrets). */
export interface SubscriptionRow {
  id: string;
  targetUrl: string;
  event: string;
  createdAt: Date;
}

/** A subscription with whether the dispatcher disabled it (a target that kept failing), and why. */
export interface SubscriptionStatusRow extends SubscriptionRow {
  disabledAt: Date | null;
  disabledReason: string | null;
}

const PUBLIC_SELECT = { id: true, targetUrl: true, event: true, createdAt: true } as const;

/**
 * Inserts a subscription unless the company already has `max` of them, in the caller's transaction `tx`. The company
 * row is locked (`SELECT ... FOR UPDATE`) until `tx` ends while counting and inserting, so concurrent subscribes
 * cannot overshoot the limit.
 * @returns the new row, or `{ limitReached: true }` when the company is at the limit.
 */
export async function insertSubscriptionWithinLimit(
  tx: Prisma.TransactionClient,
  data: { companyId: string; targetUrl: string; event: string; secret: string },
  max: number,
): Promise<WebhookSubscription | { limitReached: true }> {
  await tx.$queryRaw`SELECT id FROM companies WHERE id = ${data.companyId} FOR UPDATE`;
  const count = await tx.webhookSubscription.count({ where: { companyId: data.companyId } });
  if (count >= max) return { limitReached: true as const };
  return tx.webhookSubscription.create({ data });
}

/** The company's subscription `id` (public columns and disabled state), or null when unknown or another company's. */
export function findSubscription(db: Db, companyId: string, id: string): Promise<SubscriptionStatusRow | null> {
  return db.webhookSubscription.findFirst({
    where: { id, companyId },
    select: { ...PUBLIC_SELECT, disabledAt: true, disabledReason: true },
  });
}

/**
 * One page of the company's subscriptions, newest first (created_at desc, id desc), strictly after `after`.
 * Fetches `take` rows; callers pass `limit + 1`.
 */
export function listSubscriptions(db: Db, companyId: string, after: KeysetPosition | undefined, take: number): Promise<SubscriptionRow[]> {
  return db.webhookSubscription.findMany({
    where: { AND: [{ companyId }, keysetWhere(after)] },
    orderBy: KEYSET_ORDER,
    take,
    select: PUBLIC_SELECT,
  });
}

/**
 * Deletes the company's subscription `id`; its deliveries and their attempts go with it (cascade), so nothing more
 * is sent for it.
 * @returns false when the subscription is unknown, already deleted or another company's.
 */
export async function deleteSubscription(db: Db, companyId: string, id: string): Promise<boolean> {
  const { count } = await db.webhookSubscription.deleteMany({ where: { id, companyId } });
  return count > 0;
}

/**
 * Replaces the signing secret in one statement: the current secret becomes `previous_secret`, valid until
 * `previousExpiresAt` (the dispatcher signs with both meanwhile), and `secret` becomes `newSecret`.
 * @returns the subscription's public columns, or null when unknown or another company's.
 */
export async function rotateSubscriptionSecret(
  db: Db,
  companyId: string,
  id: string,
  newSecret: string,
  previousExpiresAt: Date,
): Promise<SubscriptionRow | null> {
  const rows = await db.$queryRaw<{ id: string; target_url: string; event: string; created_at: Date }[]>`
    UPDATE webhook_subscriptions
       SET previous_secret = secret, previous_secret_expires_at = ${previousExpiresAt}, secret = ${newSecret}
     WHERE id = ${id} AND company_id = ${companyId}
    RETURNING id, target_url, event, created_at`;
  const row = rows[0];
  return row ? { id: row.id, targetUrl: row.target_url, event: row.event, createdAt: new Date(row.created_at) } : null;
}

/**
 * Data access of the webhook dispatcher (tables `webhook_deliveries`, `webhook_attempts`, `webhook_subscriptions`,
 * read `webhook_events`): claim due deliveries under a lease, record each attempt with its state change, release
 * leases, delete a subscription whose target answered 410, disable one that kept failing.
 * CONTRACT.md "Events and deliveries". Every function is one SQL statement (atomic on its own, and short, which
 * the single connection of the embedded PGlite needs); no HTTP ever runs inside a transaction. The claim and the
 * attempt record run once per cycle / per delivery, so they are raw statements (db/sql.ts), not Prisma queries.
 */
import crypto from "node:crypto";
import { Prisma, type PrismaClient } from "../generated/prisma/client";
import { query } from "./sql";

/** A delivery claimed by one dispatcher, with everything needed to send it. */
export interface ClaimedDelivery {
  id: string;
  eventId: string;
  subscriptionId: string;
  seq: bigint;
  /** Attempts made before this one. */
  attemptCount: number;
  createdAt: Date;
  /** When this attempt was due (`next_attempt_at`, compared with the database's clock by the claim). */
  nextAttemptAt: Date;
  /** Event name, e.g. `item.created`. */
  eventType: string;
  /** The event payload (the delivery body), as stored. */
  payload: unknown;
  targetUrl: string;
  secret: string;
  /** The previous secret while its rotation overlap lasts (`previous_secret_expires_at` in the future), else null. */
  previousSecret: string | null;
}

interface ClaimRow {
  id: string;
  event_id: string;
  subscription_id: string;
  /** int8: a string from pg, a number from PGlite. */
  seq: string | number;
  attempt_count: number;
  created_at: Date;
  next_attempt_at: Date;
  type: string;
  payload: unknown;
  target_url: string;
  secret: string;
  previous_secret: string | null;
}

/**
 * Claims due deliveries for `ownerId`, safely across processes sharing one PostgreSQL database.
 *
 * Head of line: only a subscription's pending delivery with the smallest `seq` can be sent (per-subscription order
 * follows event order). Up to `limit` such heads are claimed, oldest due first: pending, `next_attempt_at <= now()`,
 * lease free or expired, subscription neither disabled nor paused (a paused subscription's queue waits for resume). The heads come from one sort of the pending rows (`DISTINCT ON`,
 * evaluated once as an array, then primary-key lookups), so a claim costs O(pending), not O(pending²) behind a
 * retrying head. `FOR UPDATE SKIP LOCKED` keeps concurrent claimers off each other's rows, re-checking state and
 * lease on the latest row version; a head completed by another process meanwhile is skipped, not replaced.
 * With each head come up to `batchSize - 1` further pending deliveries of the same subscription in `seq` order, to
 * be sent one after another: no other claimer can take them, as they are not heads while the head is pending, and
 * the shared lease covers them once it is done. The lease is `locked_until = now() + leaseMs`, `locked_by = ownerId`.
 * @returns the claimed deliveries joined with their event and subscription, grouped by subscription in `seq` order.
 */
export async function claimDueDeliveries(
  prisma: PrismaClient,
  options: { ownerId: string; limit: number; leaseMs: number; batchSize: number },
): Promise<ClaimedDelivery[]> {
  const { ownerId, limit, leaseMs, batchSize } = options;
  if (limit <= 0) return [];
  const rows = await query<ClaimRow>(
    prisma,
    `
    WITH heads AS (
      SELECT d.id, d.subscription_id, d.seq
      FROM webhook_deliveries d
      WHERE d.id = ANY (ARRAY(
          SELECT f.id FROM (
            SELECT DISTINCT ON (p.subscription_id) p.id, p.subscription_id, p.seq, p.next_attempt_at, p.locked_until
            FROM webhook_deliveries p
            WHERE p.state = 'pending'
            ORDER BY p.subscription_id, p.seq
          ) f
          WHERE f.next_attempt_at <= now()
            AND (f.locked_until IS NULL OR f.locked_until <= now())
            AND EXISTS (SELECT 1 FROM webhook_subscriptions s
                        WHERE s.id = f.subscription_id AND s.disabled_at IS NULL AND s.paused_at IS NULL)
          ORDER BY f.next_attempt_at, f.seq
          LIMIT $1::int))
        AND d.state = 'pending'
        AND (d.locked_until IS NULL OR d.locked_until <= now())
      FOR UPDATE OF d SKIP LOCKED
    ), batch AS (
      SELECT heads.id FROM heads
      UNION ALL
      SELECT next.id FROM heads CROSS JOIN LATERAL (
        SELECT n.id FROM webhook_deliveries n
        WHERE n.subscription_id = heads.subscription_id AND n.state = 'pending' AND n.seq > heads.seq
          AND n.next_attempt_at <= now() AND (n.locked_until IS NULL OR n.locked_until <= now())
        ORDER BY n.seq
        LIMIT $2::int
      ) next
    )
    UPDATE webhook_deliveries d
    SET locked_until = now() + ($3::int * interval '1 millisecond'), locked_by = $4
    FROM batch, webhook_events ev, webhook_subscriptions s
    WHERE d.id = batch.id AND ev.id = d.event_id AND s.id = d.subscription_id
    RETURNING d.id, d.event_id, d.subscription_id, d.seq, d.attempt_count, d.created_at, d.next_attempt_at, ev.type, ev.payload,
      s.target_url, s.secret,
      CASE WHEN s.previous_secret_expires_at > now() THEN s.previous_secret END AS previous_secret`,
    [limit, Math.max(0, batchSize - 1), leaseMs, ownerId],
  );
  return rows
    .map((r) => ({
      id: r.id,
      eventId: r.event_id,
      subscriptionId: r.subscription_id,
      seq: BigInt(r.seq),
      attemptCount: Number(r.attempt_count),
      createdAt: r.created_at,
      nextAttemptAt: r.next_attempt_at,
      eventType: r.type,
      payload: r.payload,
      targetUrl: r.target_url,
      secret: r.secret,
      previousSecret: r.previous_secret,
    }))
    .sort((a, b) => (a.subscriptionId < b.subscriptionId ? -1 : a.subscriptionId > b.subscriptionId ? 1 : a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0));
}

/** One row of the delivery log. */
export interface AttemptRecord {
  attemptedAt: Date;
  responseStatus: number | null;
  durationMs: number;
  responseExcerpt: string | null;
  /** The request headers sent (signature headers included), or null when nothing was sent. */
  requestHeaders: Record<string, string> | null;
  error: string | null;
  /** When the delivery will be tried again; null when this attempt ended it. */
  nextAttemptAt: Date | null;
}

/**
 * Records one attempt in the delivery log and moves its delivery on, in one statement: to `succeeded` or `failed`
 * (with `completed_at`), or back to `pending` at `attempt.nextAttemptAt`; the lease is cleared and `attempt_count`,
 * `last_status`, `last_duration_ms`, `last_error` updated. The state change only applies while `ownerId` still
 * holds the lease (a lost lease leaves the delivery to its new owner); the attempt itself is logged (with its
 * request headers) either way while the delivery exists.
 * @returns whether the state change applied.
 */
export async function recordAttempt(
  prisma: PrismaClient,
  input: { deliveryId: string; ownerId: string; state: "pending" | "succeeded" | "failed"; attempt: AttemptRecord; completedAt: Date | null },
): Promise<boolean> {
  const { deliveryId, ownerId, state, attempt, completedAt } = input;
  const rows = await query<{ updated: number }>(
    prisma,
    `
    WITH updated AS (
      UPDATE webhook_deliveries SET
        state = $1,
        attempt_count = attempt_count + 1,
        last_status = $2::int,
        last_duration_ms = $10::int,
        last_error = $3,
        next_attempt_at = COALESCE($4::timestamptz, next_attempt_at),
        completed_at = $5::timestamptz,
        locked_until = NULL,
        locked_by = NULL
      WHERE id = $6 AND locked_by = $7 AND state = 'pending'
      RETURNING id
    ), logged AS (
      INSERT INTO webhook_attempts (id, delivery_id, attempted_at, response_status, duration_ms, response_excerpt, error, next_attempt_at,
        request_headers)
      SELECT $8, d.id, $9::timestamptz, $2::int,
        $10::int, $11, $3, $4::timestamptz, $12::jsonb
      FROM webhook_deliveries d WHERE d.id = $6
      RETURNING id
    )
    SELECT (SELECT count(*) FROM updated)::int AS updated`,
    [
      state,
      attempt.responseStatus,
      attempt.error,
      attempt.nextAttemptAt,
      completedAt,
      deliveryId,
      ownerId,
      uuidv7(attempt.attemptedAt.getTime()),
      attempt.attemptedAt,
      Math.round(attempt.durationMs),
      attempt.responseExcerpt,
      attempt.requestHeaders === null ? null : JSON.stringify(attempt.requestHeaders),
    ],
  );
  return Number(rows[0]?.updated ?? 0) > 0;
}

/**
 * Clears the leases `ownerId` holds on pending deliveries (all of them, or only `deliveryIds`), so another
 * dispatcher can claim them at once instead of waiting for the lease to expire (graceful shutdown).
 * @returns how many leases were released.
 */
export async function releaseLeases(prisma: PrismaClient, ownerId: string, deliveryIds?: readonly string[]): Promise<number> {
  if (deliveryIds && deliveryIds.length === 0) return 0;
  const only = deliveryIds ? Prisma.sql`AND id IN (${Prisma.join(deliveryIds)})` : Prisma.empty;
  return prisma.$executeRaw`
    UPDATE webhook_deliveries SET locked_until = NULL, locked_by = NULL
    WHERE locked_by = ${ownerId} AND state = 'pending' ${only}`;
}

/**
 * Deletes a subscription whose target answered `410 Gone` (REST Hooks convention); its deliveries and their
 * attempts go with it (foreign-key cascade).
 * @returns whether it still existed.
 */
export async function deleteGoneSubscription(prisma: PrismaClient, subscriptionId: string): Promise<boolean> {
  const n = await prisma.$executeRaw`DELETE FROM webhook_subscriptions WHERE id = ${subscriptionId}`;
  return n > 0;
}

/**
 * Disables a subscription that has kept failing: no attempt of any of its deliveries succeeded after
 * `noSuccessSince`, and, when `lastAttemptFailedAt` is given, its last attempt at or before that time failed too
 * (so the failing run started before it). Sets `disabled_at`/`disabled_reason` (the outbox then stops queueing for
 * it) and ends its remaining pending deliveries as failed with the reason, so none waits forever.
 * @returns whether the subscription was disabled by this call.
 */
export async function disableFailingSubscription(
  prisma: PrismaClient,
  input: { subscriptionId: string; noSuccessSince: Date; lastAttemptFailedAt: Date | null; reason: string; now: Date },
): Promise<boolean> {
  const { subscriptionId, noSuccessSince, lastAttemptFailedAt, reason, now } = input;
  const rows = await prisma.$queryRaw<{ id: string }[]>`
    WITH disabled AS (
      UPDATE webhook_subscriptions s SET disabled_at = ${now}::timestamptz, disabled_reason = ${reason}
      WHERE s.id = ${subscriptionId} AND s.disabled_at IS NULL
        AND NOT EXISTS (
          SELECT 1 FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
          WHERE d.subscription_id = ${subscriptionId} AND a.attempted_at > ${noSuccessSince}::timestamptz
            AND a.response_status BETWEEN 200 AND 299)
        AND (${lastAttemptFailedAt}::timestamptz IS NULL OR EXISTS (
          SELECT 1 FROM (
            SELECT a.response_status FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
            WHERE d.subscription_id = ${subscriptionId} AND a.attempted_at <= ${lastAttemptFailedAt}::timestamptz
            ORDER BY a.attempted_at DESC LIMIT 1
          ) last_before
          WHERE last_before.response_status IS NULL OR last_before.response_status NOT BETWEEN 200 AND 299))
      RETURNING s.id
    ), ended AS (
      UPDATE webhook_deliveries SET state = 'failed', completed_at = ${now}::timestamptz,
        last_error = ${"subscription disabled: " + reason}, locked_until = NULL, locked_by = NULL
      WHERE subscription_id IN (SELECT id FROM disabled) AND state = 'pending'
      RETURNING id
    )
    SELECT id FROM disabled`;
  return rows.length > 0;
}

/** A time-ordered UUID (version 7, RFC 9562), the id format Prisma's `uuid(7)` default gives the other rows. */
export function uuidv7(ms: number = Date.now()): string {
  const bytes = crypto.randomBytes(16);
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = (bytes[6] & 0x0f) | 0x70;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

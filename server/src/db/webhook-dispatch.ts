/**
 * Data access of the webhook dispatcher (tables `webhook_subscriptions` as queues, `webhook_deliveries`,
 * `webhook_attempts`, `webhook_queue_wakeups`, read `webhook_events`): adopt the outbox's wake-ups, claim due queues
 * under a lease, record each attempt with its state change and the endpoint's health, release leases, delete a
 * subscription whose target answered 410, disable one that kept failing. CONTRACT.md "Events and deliveries".
 * No HTTP ever runs inside a transaction; the claim is the only multi-statement transaction (two statements).
 *
 * Scheduling state (docs/architecture.md "Webhook delivery scheduling"): each subscription is a queue whose
 * `next_due_at` says when the claim should next look at it (its head delivery's due time, or the end of the lease
 * of a batch in flight), null when nothing is pending. The claim walks a partial index on `next_due_at` per lane,
 * so its cost follows the work due, never the backlog behind failing heads. The rule that keeps it exact: only a
 * claim that locked the queue before reading it moves `next_due_at` later or to null (it knows the head); every
 * other writer only moves it earlier (at worst an extra look). The API's writes never touch the queue row: the
 * outbox writes a wake-up row beside its deliveries (db/outbox.ts), which `adoptWakeups` turns into "due now"
 * under the queue's lock, after the deliveries committed.
 */
import crypto from "node:crypto";
import type { PrismaClient } from "../generated/prisma/client";
import { query, sqlOf } from "./sql";

/** A delivery claimed by one dispatcher, with everything needed to send it. */
export interface ClaimedDelivery {
  id: string;
  eventId: string;
  subscriptionId: string;
  companyId: string;
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
  /** The lane it was claimed in: true for the healthy lane (webhooks/endpoint-health.ts). */
  healthy: boolean;
}

interface ClaimRow {
  id: string;
  event_id: string;
  subscription_id: string;
  company_id: string;
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
  healthy: boolean;
}

/**
 * Turns up to `limit` of the outbox's wake-up rows (oldest first) into due queues: deletes them (and the other
 * unlocked wake-ups of the same subscriptions), then, under each subscription's row lock taken in id order, sets
 * `next_due_at = now()` where it is null. A queue that is already scheduled keeps its time: whoever set it knew a
 * pending head, and looks at the queue again by then, after these deliveries committed (the lock orders it).
 * Safe across processes (`SKIP LOCKED` on the wake-ups; the queue rows are locked in id order, so no deadlock).
 * @returns how many wake-up rows were consumed (0 when there were none).
 */
export async function adoptWakeups(prisma: PrismaClient, limit: number): Promise<number> {
  const rows = await query<{ consumed: number }>(
    prisma,
    `
    WITH picked AS (
      SELECT id, subscription_id FROM webhook_queue_wakeups ORDER BY id LIMIT $1::int FOR UPDATE SKIP LOCKED
    ), subs AS (
      SELECT DISTINCT subscription_id AS id FROM picked
    ), same_queues AS (
      SELECT w.id FROM webhook_queue_wakeups w
      WHERE w.subscription_id IN (SELECT id FROM subs)
      FOR UPDATE SKIP LOCKED
    ), consumed AS (
      DELETE FROM webhook_queue_wakeups w
      WHERE w.id IN (SELECT id FROM same_queues)
      RETURNING w.id
    ), locked AS (
      SELECT s.id, s.next_due_at FROM webhook_subscriptions s
      WHERE s.id IN (SELECT id FROM subs)
      ORDER BY s.id
      FOR NO KEY UPDATE
    ), due AS (
      UPDATE webhook_subscriptions s SET next_due_at = now()
      FROM locked WHERE s.id = locked.id AND locked.next_due_at IS NULL
      RETURNING s.id
    )
    SELECT (SELECT count(*) FROM consumed)::int AS consumed`,
    [limit],
    { name: "webhook-adopt-wakeups" },
  );
  return Number(rows[0]?.consumed ?? 0);
}

/**
 * The predicate of a lane's scheduled queues, word for word the predicate of its partial index
 * (`webhook_subscriptions_due_healthy_idx` / `..._due_other_idx`, migration 20261124100000), so every query that
 * reads a lane's due queues walks that index. Columns of `webhook_subscriptions`, unqualified.
 */
export function laneQueues(healthy: boolean): string {
  return `${healthy ? "" : "NOT "}healthy AND next_due_at IS NOT NULL AND disabled_at IS NULL AND paused_at IS NULL`;
}

/** A due queue locked by the claim, offered to the lane's fair share (`shareHealthy`, `shareProbation`). */
export interface DueQueueCandidate {
  id: string;
  companyId: string;
}

/** What a lane's fair share decided: queues to claim, and queues to put back by `delayMs`. */
export interface LaneShare {
  claim: string[];
  defer: { id: string; delayMs: number }[];
}

/** How many queues each lane may claim in one call. */
export interface LaneLimits {
  /** Queues of endpoints whose last attempt succeeded quickly. */
  healthy: number;
  /** Queues of every other endpoint (the probation lane): new, failing or slow. */
  probation: number;
}

/**
 * Claims due queues for `ownerId`, safely across processes sharing one PostgreSQL database, in one transaction of
 * two statements:
 * 1. lock up to `healthyWindow` healthy and `probationWindow` probation-lane queues with `next_due_at <= now()`,
 *    oldest due first, each lane by its own partial index (`FOR NO KEY UPDATE SKIP LOCKED`: concurrent claimers
 *    take different queues; nothing waits); each lane's share then picks at most its limit (`lanes`) and may put
 *    others back (their `next_due_at` moved later, in the same transaction);
 * 2. with a snapshot taken after those locks (so every delivery committed before them is seen), read each queue's
 *    head (its pending delivery with the smallest `seq`: per-subscription order follows event order). A head that
 *    is due and not leased is claimed with, in the healthy lane, up to `batchSize - 1` due followers in `seq` order
 *    (sent one after another; no other claimer can take them while the head is pending); the probation lane
 *    probes its head alone (a circuit breaker's half-open probe). Each queue's `next_due_at` becomes the end of the lease
 *    when claimed, its head's due time (or lease end) when not due yet, or null when it is empty.
 * The lease is `locked_until = now() + leaseMs`, `locked_by = ownerId`, on the deliveries and (as `next_due_at`)
 * on the queue. The cost: two index walks bounded by the limits, then per claimed queue a few index probes;
 * it does not grow with the number of pending deliveries.
 * @returns the claimed deliveries joined with their event and subscription, grouped by subscription in `seq` order.
 */
export async function claimDueDeliveries(
  prisma: PrismaClient,
  options: {
    ownerId: string;
    lanes: LaneLimits;
    leaseMs: number;
    batchSize: number;
    /**
     * Fair share of each lane (webhooks/fair-share.ts): given up to the lane's window of locked due queues in due
     * order, picks those to claim (at most the lane's limit) and those to put back. Default: the first ones.
     */
    shareHealthy?: (candidates: DueQueueCandidate[]) => LaneShare;
    shareProbation?: (candidates: DueQueueCandidate[]) => LaneShare;
    /** How many due queues of each lane are locked and offered to its share (default: the lane's limit). */
    healthyWindow?: number;
    probationWindow?: number;
  },
): Promise<ClaimedDelivery[]> {
  const { ownerId, lanes, leaseMs, batchSize, shareHealthy, shareProbation } = options;
  const healthy = Math.max(0, Math.floor(lanes.healthy));
  const probation = Math.max(0, Math.floor(lanes.probation));
  if (healthy + probation === 0) return [];
  const windowOf = (limit: number, window: number | undefined) => (limit === 0 ? 0 : Math.max(limit, Math.floor(window ?? limit)));
  const rows = await sqlOf(prisma).transaction(async (tx) => {
    const locked = await tx<{ id: string; healthy: boolean; company_id: string }>(
      `
      WITH healthy_lane AS (
        SELECT id, company_id FROM webhook_subscriptions
        WHERE ${laneQueues(true)} AND next_due_at <= now()
        ORDER BY next_due_at
        LIMIT $1::int
        FOR NO KEY UPDATE SKIP LOCKED
      ), probation_lane AS (
        SELECT id, company_id FROM webhook_subscriptions
        WHERE ${laneQueues(false)} AND next_due_at <= now()
        ORDER BY next_due_at
        LIMIT $2::int
        FOR NO KEY UPDATE SKIP LOCKED
      )
      SELECT id, true AS healthy, company_id FROM healthy_lane
      UNION ALL
      SELECT id, false AS healthy, company_id FROM probation_lane`,
      [windowOf(healthy, options.healthyWindow), windowOf(probation, options.probationWindow)],
    );
    const decide = (lane: boolean, limit: number, share?: (c: DueQueueCandidate[]) => LaneShare): LaneShare => {
      const candidates = locked.filter((q) => q.healthy === lane).map((q) => ({ id: q.id, companyId: q.company_id }));
      const decision = share ? share(candidates) : { claim: candidates.map((c) => c.id), defer: [] };
      return { claim: decision.claim.slice(0, limit), defer: decision.defer };
    };
    const healthyShare = decide(true, healthy, shareHealthy);
    const probationShare = decide(false, probation, shareProbation);
    const chosen = new Set([...healthyShare.claim, ...probationShare.claim]);
    const queues = locked.filter((q) => chosen.has(q.id));
    const defer = [...healthyShare.defer, ...probationShare.defer];
    if (defer.length > 0) {
      // Locked above, so moving them later is the claim's to do (see the module's rule): due again after the delay.
      await tx(
        `UPDATE webhook_subscriptions s SET next_due_at = now() + (d.delay_ms * interval '1 millisecond')
         FROM unnest($1::text[], $2::int[]) AS d(id, delay_ms)
         WHERE s.id = d.id`,
        [defer.map((d) => d.id), defer.map((d) => Math.max(0, Math.round(d.delayMs)))],
      );
    }
    if (queues.length === 0) return [];
    return tx<ClaimRow>(
      `
      WITH queue AS (
        SELECT * FROM unnest($1::text[], $2::bool[]) AS q(id, healthy)
      ), head AS (
        SELECT queue.id AS subscription_id, queue.healthy, h.id, h.seq, h.next_attempt_at, h.locked_until,
          (h.id IS NOT NULL AND h.next_attempt_at <= now() AND (h.locked_until IS NULL OR h.locked_until <= now())) AS ready
        FROM queue LEFT JOIN LATERAL (
          SELECT d.id, d.seq, d.next_attempt_at, d.locked_until FROM webhook_deliveries d
          WHERE d.subscription_id = queue.id AND d.state = 'pending'
          ORDER BY d.seq
          LIMIT 1
        ) h ON true
      ), batch AS (
        SELECT head.id FROM head WHERE head.ready
        UNION ALL
        SELECT f.id FROM head CROSS JOIN LATERAL (
          -- The unbroken run of due, unleased deliveries right after the head: it stops at the first one that is
          -- not due or is leased (in flight elsewhere, e.g. beside a redelivered head), so order is never skipped.
          SELECT r.id FROM (
            SELECT n.id, bool_and(n.next_attempt_at <= now() AND (n.locked_until IS NULL OR n.locked_until <= now()))
                OVER (ORDER BY n.seq) AS unbroken
            FROM (
              SELECT n.id, n.seq, n.next_attempt_at, n.locked_until FROM webhook_deliveries n
              WHERE head.ready AND head.healthy
                AND n.subscription_id = head.subscription_id AND n.state = 'pending' AND n.seq > head.seq
              ORDER BY n.seq
              LIMIT $3::int
            ) n
          ) r
          WHERE r.unbroken
        ) f
      ), leased AS (
        UPDATE webhook_deliveries d
        SET locked_until = now() + ($4::int * interval '1 millisecond'), locked_by = $5
        FROM batch WHERE d.id = batch.id
        RETURNING d.id, d.event_id, d.subscription_id, d.seq, d.attempt_count, d.created_at, d.next_attempt_at
      ), scheduled AS (
        UPDATE webhook_subscriptions s SET next_due_at = CASE
            WHEN head.id IS NULL THEN NULL
            WHEN head.ready THEN now() + ($4::int * interval '1 millisecond')
            ELSE GREATEST(head.next_attempt_at, COALESCE(head.locked_until, head.next_attempt_at))
          END
        FROM head WHERE s.id = head.subscription_id
        RETURNING s.id
      )
      SELECT l.id, l.event_id, l.subscription_id, s.company_id, l.seq, l.attempt_count, l.created_at, l.next_attempt_at,
        ev.type, ev.payload, s.target_url, s.secret,
        CASE WHEN s.previous_secret_expires_at > now() THEN s.previous_secret END AS previous_secret,
        queue.healthy
      FROM leased l
      JOIN webhook_events ev ON ev.id = l.event_id
      JOIN webhook_subscriptions s ON s.id = l.subscription_id
      JOIN queue ON queue.id = l.subscription_id`,
      [queues.map((q) => q.id), queues.map((q) => q.healthy), Math.max(0, batchSize - 1), leaseMs, ownerId],
    );
  });
  return rows
    .map((r) => ({
      id: r.id,
      eventId: r.event_id,
      subscriptionId: r.subscription_id,
      companyId: r.company_id,
      seq: BigInt(r.seq),
      attemptCount: Number(r.attempt_count),
      createdAt: r.created_at,
      nextAttemptAt: r.next_attempt_at,
      eventType: r.type,
      payload: r.payload,
      targetUrl: r.target_url,
      secret: r.secret,
      previousSecret: r.previous_secret,
      healthy: r.healthy,
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

/** What the attempt's result means for its queue (the subscription). */
export interface QueueUpdate {
  /** The endpoint's lane from now on (webhooks/endpoint-health.ts). */
  healthy: boolean;
  /** Whether this attempt failed: starts or extends the run of failures (`failing_since`), else ends it. */
  failed: boolean;
  /**
   * When the claim should look at the queue next: `keep` (more of the claimed batch follows), `now` (the batch is
   * over: look again for what follows), or a time (the head stays pending until its retry at that time; earlier
   * only, like every writer but the claim: a redelivered head may be due sooner, and the claim reschedules).
   */
  nextLook: "keep" | "now" | Date;
}

/**
 * Records one attempt in the delivery log and moves its delivery and its queue on, in one statement: the delivery
 * to `succeeded` or `failed` (with `completed_at`), or back to `pending` at `attempt.nextAttemptAt`; the lease is
 * cleared and `attempt_count`, `last_status`, `last_duration_ms`, `last_error` updated; the subscription's health
 * (`healthy`, `failing_since`, `consecutive_failures`) and `next_due_at` as `queue` says. The state changes only
 * apply while `ownerId` still holds the lease (a lost lease leaves the delivery to its new owner); the attempt itself
 * is logged (with its request headers) either way while the delivery exists, and counted in its `attempt_count` either
 * way (`cur` locks the delivery row and reads its newest state, after a concurrent item deletion that ended it: the
 * log then lists as many attempts as the delivery counts, never `failed` with 0 attempts beside one listed), without
 * the response excerpt when the
 * event's body has been erased meanwhile or the state change did not apply (its item was deleted, which ends the
 * delivery and erases the body, while this attempt was in flight: a target may echo the body back). The subscription
 * row is locked first,
 * as the claim does, so the two never deadlock.
 * @returns whether the state change applied.
 */
export async function recordAttempt(
  prisma: PrismaClient,
  input: {
    deliveryId: string;
    subscriptionId: string;
    ownerId: string;
    state: "pending" | "succeeded" | "failed";
    attempt: AttemptRecord;
    completedAt: Date | null;
    queue: QueueUpdate;
  },
): Promise<boolean> {
  const { deliveryId, subscriptionId, ownerId, state, attempt, completedAt, queue } = input;
  const nextLook = queue.nextLook instanceof Date ? "at" : queue.nextLook;
  const rows = await query<{ updated: number }>(
    prisma,
    `
    WITH sub AS (
      SELECT id FROM webhook_subscriptions WHERE id = $13 FOR NO KEY UPDATE
    ), cur AS (
      SELECT d.id, (d.locked_by = $7 AND d.state = 'pending') AS holds
      FROM webhook_deliveries d JOIN sub ON d.subscription_id = sub.id WHERE d.id = $6 FOR NO KEY UPDATE OF d
    ), counted AS (
      UPDATE webhook_deliveries d SET attempt_count = d.attempt_count + 1, last_status = $2::int, last_duration_ms = $10::int
      FROM cur WHERE d.id = cur.id AND NOT cur.holds
      RETURNING d.id
    ), updated AS (
      UPDATE webhook_deliveries d SET
        state = $1,
        attempt_count = d.attempt_count + 1,
        last_status = $2::int,
        last_duration_ms = $10::int,
        last_error = $3,
        next_attempt_at = COALESCE($4::timestamptz, d.next_attempt_at),
        completed_at = $5::timestamptz,
        locked_until = NULL,
        locked_by = NULL
      FROM sub
      WHERE d.id = $6 AND d.subscription_id = sub.id AND d.locked_by = $7 AND d.state = 'pending' AND EXISTS (SELECT 1 FROM cur WHERE cur.holds)
      RETURNING d.id, d.subscription_id
    ), logged AS (
      INSERT INTO webhook_attempts (id, delivery_id, attempted_at, response_status, duration_ms, response_excerpt, error, next_attempt_at,
        request_headers)
      SELECT $8, d.id, $9::timestamptz, $2::int,
        $10::int, CASE WHEN ev.erased_at IS NULL AND EXISTS (SELECT 1 FROM updated) THEN $11 END, $3, $4::timestamptz, $12::jsonb
      FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id WHERE d.id = $6
      RETURNING id
    ), health AS (
      UPDATE webhook_subscriptions s SET
        healthy = $14::bool,
        failing_since = CASE WHEN $15::bool THEN COALESCE(s.failing_since, $9::timestamptz) END,
        consecutive_failures = CASE WHEN $15::bool THEN s.consecutive_failures + 1 ELSE 0 END,
        next_due_at = CASE $16::text
          WHEN 'now' THEN LEAST(COALESCE(s.next_due_at, now()), now())
          WHEN 'at' THEN LEAST(COALESCE(s.next_due_at, $17::timestamptz), $17::timestamptz)
          ELSE s.next_due_at END
      FROM updated
      WHERE s.id = updated.subscription_id
        AND (s.healthy <> $14::bool OR $15::bool OR s.failing_since IS NOT NULL OR $16::text <> 'keep')
      RETURNING s.id
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
      subscriptionId,
      queue.healthy,
      queue.failed,
      nextLook,
      queue.nextLook instanceof Date ? queue.nextLook : null,
    ],
  );
  return Number(rows[0]?.updated ?? 0) > 0;
}

/**
 * Clears the leases `ownerId` holds on pending deliveries (all of them, or only `deliveryIds`), so another
 * dispatcher can claim them at once instead of waiting for the lease to expire (a batch cut short, graceful
 * shutdown), and makes their queues due now. Queue rows are locked first, in id order, as everywhere else.
 * @returns how many leases were released.
 */
export async function releaseLeases(prisma: PrismaClient, ownerId: string, deliveryIds?: readonly string[]): Promise<number> {
  if (deliveryIds && deliveryIds.length === 0) return 0;
  const rows = await query<{ released: number }>(
    prisma,
    `
    WITH mine AS (
      SELECT id, subscription_id FROM webhook_deliveries
      WHERE locked_by = $1 AND state = 'pending' AND ($2::text[] IS NULL OR id = ANY ($2::text[]))
    ), queues AS (
      SELECT s.id FROM webhook_subscriptions s WHERE s.id IN (SELECT subscription_id FROM mine) ORDER BY s.id FOR NO KEY UPDATE
    ), released AS (
      UPDATE webhook_deliveries d SET locked_until = NULL, locked_by = NULL
      FROM mine
      WHERE d.id = mine.id AND d.locked_by = $1 AND d.state = 'pending' AND d.subscription_id IN (SELECT id FROM queues)
      RETURNING d.id
    ), due AS (
      UPDATE webhook_subscriptions s SET next_due_at = LEAST(COALESCE(s.next_due_at, now()), now())
      FROM queues WHERE s.id = queues.id
      RETURNING s.id
    )
    SELECT (SELECT count(*) FROM released)::int AS released`,
    [ownerId, deliveryIds ? [...deliveryIds] : null],
  );
  return Number(rows[0]?.released ?? 0);
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

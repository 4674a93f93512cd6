/**
 * The delivery log of webhook subscriptions, REST hooks and console endpoints alike (tables `webhook_deliveries`,
 * `webhook_attempts`, with the event name from `webhook_events`), as read by GET /v1/ext/webhooks/{webhook_id}/
 * deliveries and the console's delivery log, plus the one write made to it from outside the dispatcher: putting a
 * delivery back in the queue (redeliver, "Resend"). Sending, retries and attempt recording belong to the
 * dispatcher. Callers check first that the subscription belongs to their company.
 */
import type { Prisma, PrismaClient } from "../generated/prisma/client";
import { KEYSET_ORDER, keysetWhere, type KeysetPosition } from "./keyset";
import type { DeliveryState } from "@stageline/shared";
import { query } from "./sql";

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
 * lease released (`locked_until`, `locked_by` null), `completed_at` null, and its queue due now (the subscription's
 * `next_due_at`, moved earlier only: db/webhook-dispatch.ts). Its attempts and `attempt_count` are kept. A delivery
 * a dispatcher holds is released too: the holder's result then no longer applies (its lease is gone) and the
 * delivery goes out again, so "Resend" always sends, at the cost of a possible second send of the same
 * `webhook-id` (delivery is at least once). One statement, which locks the queue row before the delivery row, as
 * the dispatcher's statements do (no deadlock with them).
 * A delivery whose event body was erased (its item was deleted: CONTRACT "Item deletion and erasure") is left as it
 * is: there is nothing left to send.
 * @returns `missing` when it is not a delivery of that subscription, `erased` when its body was erased, else
 * `requeued`.
 */
export async function requeueDelivery(
  db: Db,
  subscriptionId: string,
  deliveryId: string,
  now: Date,
): Promise<"requeued" | "erased" | "missing"> {
  const rows = await db.$queryRaw<{ found: number; requeued: number }[]>`
    WITH sub AS (
      SELECT id FROM webhook_subscriptions WHERE id = ${subscriptionId} FOR NO KEY UPDATE
    ), requeued AS (
      UPDATE webhook_deliveries d SET state = 'pending', next_attempt_at = ${now}::timestamptz, locked_until = NULL,
        locked_by = NULL, completed_at = NULL
      FROM sub
      WHERE d.id = ${deliveryId} AND d.subscription_id = sub.id
        AND NOT EXISTS (SELECT 1 FROM webhook_events e WHERE e.id = d.event_id AND e.erased_at IS NOT NULL)
      RETURNING d.id
    ), due AS (
      UPDATE webhook_subscriptions s SET next_due_at = LEAST(COALESCE(s.next_due_at, ${now}::timestamptz), ${now}::timestamptz)
      FROM sub WHERE s.id = sub.id AND EXISTS (SELECT 1 FROM requeued)
      RETURNING s.id
    )
    SELECT count(*)::int AS found, (SELECT count(*) FROM requeued)::int AS requeued
    FROM webhook_deliveries d JOIN sub ON d.subscription_id = sub.id WHERE d.id = ${deliveryId}`;
  if (Number(rows[0]?.found ?? 0) === 0) return "missing";
  return Number(rows[0]?.requeued ?? 0) > 0 ? "requeued" : "erased";
}

/**
 * Replay of a range (CONTRACT "Events feed": POST /v1/ext/webhooks/{webhook_id}/replay; Standard Webhooks' "replay
 * failures of a range"): puts back in the queue, as `requeueDelivery` does one, the deliveries of `subscriptionId`
 * created in [`since`, `until`) whose state is one of `states` (`failed`, or `failed` and `succeeded`; pending ones
 * are queued already), the oldest first, at most `cap` of them, skipping those whose event body was erased (nothing
 * left to send). Their attempts, `webhook-id` (the event id) and `seq` are kept, so they go out through the normal
 * dispatcher, in event order within the subscription and under its fairness rules. One statement, which locks the
 * queue row before the delivery rows, as the dispatcher's statements do (no deadlock with them). Per state, a
 * range scan of the index `webhook_deliveries (subscription_id, state, created_at desc, id desc)` (read backwards,
 * oldest first) that stops after `cap` rows, however many deliveries the range holds.
 * @returns how many deliveries were queued again (at most `cap`).
 */
export async function requeueRange(
  db: Db,
  subscriptionId: string,
  range: { since: Date; until: Date; states: readonly DeliveryState[]; cap: number },
  now: Date,
): Promise<number> {
  const rows = await db.$queryRaw<{ requeued: number }[]>`
    WITH sub AS (
      SELECT id FROM webhook_subscriptions WHERE id = ${subscriptionId} FOR NO KEY UPDATE
    ), picked AS (
      SELECT p.id FROM sub CROSS JOIN unnest(${[...range.states]}::text[]) AS st(state)
      CROSS JOIN LATERAL (
        SELECT d.id, d.created_at FROM webhook_deliveries d
        WHERE d.subscription_id = sub.id AND d.state = st.state
          AND d.created_at >= ${range.since}::timestamptz AND d.created_at < ${range.until}::timestamptz
          AND NOT EXISTS (SELECT 1 FROM webhook_events e WHERE e.id = d.event_id AND e.erased_at IS NOT NULL)
        ORDER BY d.created_at, d.id
        LIMIT ${range.cap}::int
      ) p
      ORDER BY p.created_at, p.id
      LIMIT ${range.cap}::int
    ), requeued AS (
      UPDATE webhook_deliveries d SET state = 'pending', next_attempt_at = ${now}::timestamptz, locked_until = NULL,
        locked_by = NULL, completed_at = NULL
      FROM picked
      WHERE d.id = picked.id AND d.state <> 'pending'
      RETURNING d.id
    ), due AS (
      UPDATE webhook_subscriptions s SET next_due_at = LEAST(COALESCE(s.next_due_at, ${now}::timestamptz), ${now}::timestamptz)
      FROM sub WHERE s.id = sub.id AND EXISTS (SELECT 1 FROM requeued)
      RETURNING s.id
    )
    SELECT (SELECT count(*) FROM requeued)::int AS requeued`;
  return Number(rows[0]?.requeued ?? 0);
}

/**
 * How many deliveries of `subscriptionId` are pending, counted up to `cap` (an index range scan of at most `cap`
 * rows, so a page never pays for a huge backlog).
 * @returns the count, at most `cap`.
 */
export async function countPendingDeliveries(db: Db, subscriptionId: string, cap: number): Promise<number> {
  const rows = await db.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM (
      SELECT 1 FROM webhook_deliveries WHERE subscription_id = ${subscriptionId} AND state = 'pending' LIMIT ${cap}::int
    ) waiting`;
  return Number(rows[0]?.n ?? 0);
}

/** Where a delivery stands, as the console's delivery logs show it (the latest attempt's status and duration are on the delivery). */
export interface DeliveryProgress {
  state: string;
  attemptCount: number;
  lastStatus: number | null;
  lastDurationMs: number | null;
  lastError: string | null;
  nextAttemptAt: Date;
  createdAt: Date;
  completedAt: Date | null;
}

/** The columns of {@link DeliveryProgress} of `webhook_deliveries d`, as selected. */
const PROGRESS_COLUMNS = "d.state, d.attempt_count, d.last_status, d.last_duration_ms, d.last_error, d.next_attempt_at, d.created_at, d.completed_at";

/** {@link PROGRESS_COLUMNS} as the driver returns them. */
interface ProgressSqlRow {
  state: string;
  attempt_count: number;
  last_status: number | null;
  last_duration_ms: number | null;
  last_error: string | null;
  next_attempt_at: Date;
  created_at: Date;
  completed_at: Date | null;
}

function progressOf(r: ProgressSqlRow): DeliveryProgress {
  return {
    state: r.state,
    attemptCount: Number(r.attempt_count),
    lastStatus: r.last_status,
    lastDurationMs: r.last_duration_ms,
    lastError: r.last_error,
    nextAttemptAt: new Date(r.next_attempt_at),
    createdAt: new Date(r.created_at),
    completedAt: r.completed_at === null ? null : new Date(r.completed_at),
  };
}

/** One line of the console's delivery log: the delivery, its event name and its latest attempt's status and duration. */
export interface DeliverySummaryRow extends DeliveryProgress {
  id: string;
  eventId: string;
  event: string;
}

/**
 * One page of a subscription's delivery log for the console, newest first (created_at desc, id desc), strictly
 * after `after`, optionally only deliveries in `state`: one raw SELECT (db/sql.ts) on the index
 * (subscription_id, [state,] created_at desc, id desc) joined to each delivery's event by primary key, without the
 * attempts (the latest attempt's status and duration are on the delivery). Fetches `take` rows; callers pass
 * `limit + 1`. Callers check first that the subscription belongs to their company.
 */
export async function listDeliverySummaries(
  prisma: PrismaClient,
  subscriptionId: string,
  filter: { state?: string | undefined; after?: KeysetPosition | undefined },
  take: number,
): Promise<DeliverySummaryRow[]> {
  const params: unknown[] = [subscriptionId];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const where = ["d.subscription_id = $1"];
  if (filter.state !== undefined) where.push(`d.state = ${param(filter.state)}`);
  if (filter.after !== undefined) {
    const at = param(filter.after.createdAt);
    const id = param(filter.after.id);
    where.push(`d.created_at <= ${at}::timestamptz`);
    where.push(`(d.created_at < ${at}::timestamptz OR (d.created_at = ${at}::timestamptz AND d.id < ${id}))`);
  }
  const shape = `${filter.state === undefined ? 0 : 1}${filter.after === undefined ? 0 : 1}`;
  const rows = await query<ProgressSqlRow & { id: string; event_id: string; event: string }>(
    prisma,
    `SELECT d.id, d.event_id, e.type AS event, ${PROGRESS_COLUMNS}
     FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
     WHERE ${where.join(" AND ")}
     ORDER BY d.created_at DESC, d.id DESC LIMIT ${param(take)}::int`,
    params,
    { name: `list-delivery-summaries-${shape}` },
  );
  return rows.map((r) => ({ id: r.id, eventId: r.event_id, event: r.event, ...progressOf(r) }));
}

/** Attempts a delivery detail shows at most (the newest). */
export const DETAIL_ATTEMPTS = 50;

/** What `findDeliveryDetail` loads: the delivery, its event (name and the exact body sent) and its newest attempts. */
const DELIVERY_DETAIL_INCLUDE = {
  event: { select: { type: true, payload: true } },
  attempts: { orderBy: [{ attemptedAt: "desc" }, { id: "desc" }], take: DETAIL_ATTEMPTS },
} satisfies Prisma.WebhookDeliveryInclude;

/** A delivery with its event's name and body and its newest attempts (request headers, response excerpt). */
export type DeliveryDetailRow = Prisma.WebhookDeliveryGetPayload<{ include: typeof DELIVERY_DETAIL_INCLUDE }>;

/** Delivery `deliveryId` of subscription `subscriptionId` in detail, or null when it is not one of its deliveries. */
export function findDeliveryDetail(db: Db, subscriptionId: string, deliveryId: string): Promise<DeliveryDetailRow | null> {
  return db.webhookDelivery.findFirst({ where: { id: deliveryId, subscriptionId }, include: DELIVERY_DETAIL_INCLUDE });
}

/** One delivery of an event, with the endpoint (subscription) it goes to (the console's event page). */
export interface EventDeliveryRow extends DeliveryProgress {
  id: string;
  subscriptionId: string;
  targetUrl: string;
  description: string | null;
  /** `console` (an endpoint made in the console) or `api` (a REST hook). */
  origin: string;
}

/**
 * One page of event `eventId`'s deliveries to the subscriptions of company `companyId`, in id order (the order they
 * were queued), strictly after delivery id `after`, with each subscription's URL, description and origin. Read
 * through the index `webhook_deliveries (event_id)` (an event has at most one delivery per subscription, so at most
 * MAX_SUBSCRIPTIONS_PER_COMPANY), each joined to its subscription by primary key: its cost does not grow with the
 * deliveries of other events (checked with EXPLAIN in console-events-db.test.ts). Fetches `take` rows; callers pass
 * `limit + 1`.
 */
export async function listEventDeliveries(
  prisma: PrismaClient,
  companyId: string,
  eventId: string,
  after: string | null,
  take: number,
): Promise<EventDeliveryRow[]> {
  const rows = await query<ProgressSqlRow & { id: string; subscription_id: string; target_url: string; description: string | null; origin: string }>(
    prisma,
    EVENT_DELIVERIES_SQL,
    [eventId, companyId, after, take],
    { name: "list-event-deliveries" },
  );
  return rows.map((r) => ({
    id: r.id,
    subscriptionId: r.subscription_id,
    targetUrl: r.target_url,
    description: r.description,
    origin: r.origin,
    ...progressOf(r),
  }));
}

/** The statement of {@link listEventDeliveries}: `$1` event id, `$2` company id, `$3` the last delivery id seen (or null), `$4` rows. */
export const EVENT_DELIVERIES_SQL = `SELECT d.id, d.subscription_id, s.target_url, s.description, s.origin, ${PROGRESS_COLUMNS}
     FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id
     WHERE d.event_id = $1 AND s.company_id = $2 AND ($3::text IS NULL OR d.id > $3::text)
     ORDER BY d.id LIMIT $4::int`;

/** One attempt of a delivery, as the console's event page lists it. */
export interface RecentAttemptRow {
  id: string;
  deliveryId: string;
  attemptedAt: Date;
  /** The response's HTTP status, or null when none came (network error, timeout). */
  responseStatus: number | null;
  /** How long the attempt took, in ms. */
  durationMs: number;
  error: string | null;
  /** When the delivery was to be tried again after this attempt, or null. */
  nextAttemptAt: Date | null;
}

/**
 * The newest `perDelivery` attempts of each delivery of `deliveryIds` (newest first per delivery), through the index
 * `webhook_attempts (delivery_id, attempted_at desc)`: one index range of at most `perDelivery` rows per delivery.
 * Callers pass the ids of deliveries they have already found within the caller's company.
 */
export async function listRecentAttempts(prisma: PrismaClient, deliveryIds: readonly string[], perDelivery: number): Promise<RecentAttemptRow[]> {
  if (deliveryIds.length === 0) return [];
  const rows = await query<{
    id: string;
    delivery_id: string;
    attempted_at: Date;
    response_status: number | null;
    duration_ms: number;
    error: string | null;
    next_attempt_at: Date | null;
  }>(
    prisma,
    `SELECT a.id, a.delivery_id, a.attempted_at, a.response_status, a.duration_ms, a.error, a.next_attempt_at
     FROM unnest($1::text[]) AS d(id)
     CROSS JOIN LATERAL (
       SELECT x.id, x.delivery_id, x.attempted_at, x.response_status, x.duration_ms, x.error, x.next_attempt_at
       FROM webhook_attempts x WHERE x.delivery_id = d.id
       ORDER BY x.attempted_at DESC, x.id DESC LIMIT $2::int
     ) a`,
    [[...deliveryIds], perDelivery],
    { name: "list-recent-attempts" },
  );
  return rows.map((r) => ({
    id: r.id,
    deliveryId: r.delivery_id,
    attemptedAt: new Date(r.attempted_at),
    responseStatus: r.response_status,
    durationMs: Number(r.duration_ms),
    error: r.error,
    nextAttemptAt: r.next_attempt_at === null ? null : new Date(r.next_attempt_at),
  }));
}

/**
 * The subscription of delivery `deliveryId` of event `eventId`, when that subscription is company `companyId`'s;
 * null otherwise (unknown, of another event, or of another company).
 */
export async function findEventDeliverySubscription(prisma: PrismaClient, companyId: string, eventId: string, deliveryId: string): Promise<string | null> {
  const rows = await query<{ subscription_id: string }>(
    prisma,
    `SELECT d.subscription_id FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id
     WHERE d.id = $1 AND d.event_id = $2 AND s.company_id = $3`,
    [deliveryId, eventId, companyId],
  );
  return rows[0]?.subscription_id ?? null;
}

/**
 * How many deliveries each event of `eventIds` has in each state (`pending`, `succeeded`, `failed`), through the
 * index `webhook_deliveries (event_id)`. Events without deliveries are absent. Callers pass ids of their company's
 * events (a page of them).
 * @returns event id → state → count.
 */
export async function countDeliveriesByEvent(prisma: PrismaClient, eventIds: readonly string[]): Promise<Map<string, Record<string, number>>> {
  const counts = new Map<string, Record<string, number>>();
  if (eventIds.length === 0) return counts;
  const rows = await query<{ event_id: string; state: string; n: number }>(
    prisma,
    `SELECT event_id, state, count(*)::int AS n FROM webhook_deliveries WHERE event_id = ANY ($1::text[]) GROUP BY event_id, state`,
    [[...eventIds]],
  );
  for (const r of rows) counts.set(r.event_id, { ...counts.get(r.event_id), [r.state]: Number(r.n) });
  return counts;
}

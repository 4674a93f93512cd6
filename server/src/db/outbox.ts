/** Data access for the transactional outbox (tables `webhook_events` and `webhook_deliveries`). */
import type { Prisma } from "../generated/prisma/client";
import { uuidv7 } from "./webhook-dispatch";

/**
 * Inserts one outbox event inside the caller's transaction; returns its id and commit-order `seq`. The API's writes
 * insert their events in their own statement (`insertEventsCte`); this and `fanOutEvent` serve writes made in an
 * interactive transaction (the webhook tests' event fixtures).
 */
export function insertEvent(
  tx: Prisma.TransactionClient,
  event: { companyId: string; type: string; resourceId: string; payload: Prisma.InputJsonValue },
) {
  return tx.webhookEvent.create({ data: event, select: { id: true, seq: true } });
}

/**
 * The CTE `woken` that writes one wake-up row per subscription the CTE `queued` (column `subscription_id`) queued
 * deliveries for: the dispatcher's `adoptWakeups` turns them into due queues (db/webhook-dispatch.ts). A plain
 * insert, so concurrent writes never wait on each other's queue rows.
 */
const WAKEUPS_CTE = `woken AS (
       INSERT INTO webhook_queue_wakeups (subscription_id) SELECT DISTINCT subscription_id FROM queued
     )`;

/**
 * The fan-out as data-modifying CTEs, for statements that write their events themselves (db/items.ts) and for
 * `fanOutEvent`: `subscribers` and `queued` queue one pending delivery per active (neither disabled nor paused)
 * subscription of the company given
 * by the SQL parameter `companyParam` (e.g. `$2`) to the name of each row of the CTE `eventsCte` (columns id, type,
 * seq). Append to a `WITH` list after `eventsCte`; `queued` returns one row per delivery (`id`, `subscription_id`), and
 * `woken` writes the wake-ups that tell the dispatcher.
 *
 * The subscriptions are read `FOR KEY SHARE`: an unsubscribe (or a 410 Gone) racing with the statement either
 * committed first (the subscription is skipped) or waits for this commit and then removes the new delivery with its
 * subscription (ON DELETE CASCADE) — never a foreign-key failure of the change itself.
 */
export function fanOutCtes(eventsCte: string, companyParam: string): string {
  return `${subscribersCte(companyParam, `ARRAY(SELECT type FROM ${eventsCte})`)}, ${queueDeliveriesCtes(eventsCte)}`;
}

/**
 * The CTE `subscribers` of `fanOutCtes`: the active (neither disabled nor paused) subscriptions of the company of
 * SQL parameter `companyParam` to any of the event names of the SQL `text[]` expression `typesSql`, read
 * `FOR KEY SHARE` (see `fanOutCtes`). For statements that must know the subscribers before they write their events
 * (db/item-delete.ts: an `item.deleted` nobody subscribes to is stored already erased).
 */
export function subscribersCte(companyParam: string, typesSql: string): string {
  return `subscribers AS (
       SELECT id, events FROM webhook_subscriptions
       WHERE company_id = ${companyParam} AND events && ${typesSql}
         AND disabled_at IS NULL AND paused_at IS NULL
       FOR KEY SHARE
     )`;
}

/**
 * The CTEs `queued` (one pending delivery per row of `eventsCte` (id, type, seq) and row of the CTE `subscribers`
 * (`subscribersCte`) subscribed to its name; returns id, subscription_id) and `woken` (their wake-ups).
 */
export function queueDeliveriesCtes(eventsCte: string): string {
  return `queued AS (
       INSERT INTO webhook_deliveries (id, event_id, subscription_id, seq)
       SELECT gen_random_uuid()::text, ${eventsCte}.id, subscribers.id, ${eventsCte}.seq
       FROM ${eventsCte} JOIN subscribers ON ${eventsCte}.type = ANY (subscribers.events)
       RETURNING id, subscription_id
     ), ${WAKEUPS_CTE}`;
}

/** An outbox event a statement writes itself: its id (uuid v7), name and the exact JSON body to deliver. */
export interface OutboxEventToInsert {
  id: string;
  type: string;
  /** Stored as `JSON.stringify` writes it (key order kept: the column is `json`, not `jsonb`). */
  payload: unknown;
}

/**
 * The parameters `eventsCte` reads, in this order: event ids, names and JSON texts (three `text[]`).
 */
export function eventParams(events: readonly OutboxEventToInsert[]): [string[], string[], string[]] {
  return [events.map((e) => e.id), events.map((e) => e.type), events.map((e) => JSON.stringify(e.payload))];
}

/**
 * The CTE `name` that writes the events given as the `text[]` parameters `first`, `first + 1`, `first + 2`
 * (`eventParams`: ids, names, payloads) about the row of the one-row CTE `resourceCte` (column `id`), for the company
 * of parameter `companyParam`; nothing when `resourceCte` is empty. The events are inserted in array order, so their
 * `seq` follows it. Returns (id, type, seq), ready for `fanOutCtes(name, companyParam)`.
 */
export function insertEventsCte(name: string, resourceCte: string, companyParam: string, first: number): string {
  return `${name} AS (
       INSERT INTO webhook_events (id, company_id, type, resource_id, payload)
       SELECT e.id, ${companyParam}, e.type, ${resourceCte}.id, e.payload::json
       FROM ${resourceCte} CROSS JOIN unnest($${first}::text[], $${first + 1}::text[], $${first + 2}::text[]) WITH ORDINALITY AS e(id, type, payload, n)
       ORDER BY e.n
       RETURNING id, type, seq
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

/**
 * Stores one outbox event and queues its delivery to the one subscription `subscriptionId` only (the console's
 * "Send test event"), in one statement. Nothing is queued when the subscription is not the company's or is
 * disabled or paused.
 * @returns the event id, or null when nothing was queued (the event is then not stored either).
 */
export async function insertEventForSubscription(
  tx: Prisma.TransactionClient,
  event: { companyId: string; type: string; resourceId: string; payload: Prisma.InputJsonValue },
  subscriptionId: string,
): Promise<string | null> {
  const rows = await tx.$queryRawUnsafe<{ id: string }[]>(
    `WITH target AS (
       SELECT id FROM webhook_subscriptions
       WHERE id = $1 AND company_id = $2 AND disabled_at IS NULL AND paused_at IS NULL
       FOR KEY SHARE
     ), event AS (
       INSERT INTO webhook_events (id, company_id, type, resource_id, payload)
       SELECT $6, $2, $3, $4, $5::json FROM target
       RETURNING id, seq
     ), queued AS (
       INSERT INTO webhook_deliveries (id, event_id, subscription_id, seq)
       SELECT gen_random_uuid()::text, event.id, target.id, event.seq FROM event, target
       RETURNING event_id, subscription_id
     ), ${WAKEUPS_CTE}
     SELECT event_id AS id FROM queued`,
    subscriptionId,
    event.companyId,
    event.type,
    event.resourceId,
    JSON.stringify(event.payload),
    uuidv7(),
  );
  return rows[0]?.id ?? null;
}

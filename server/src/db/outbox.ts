/** Data access for the transactional outbox (tables `webhook_events` and `webhook_deliveries`). */
import type { Prisma } from "../generated/prisma/client";
import { currentEventActor } from "./event-actor";
import { uuidv7 } from "./webhook-dispatch";

/**
 * The class id (first key) of the company event-order locks: the two-int4 advisory-lock key space
 * (`pg_advisory_xact_lock(int4, int4)`), which PostgreSQL keeps apart from the one-bigint space that the
 * idempotency, upsert and migration locks use, and a class of its own within it.
 */
export const EVENT_ORDER_LOCK_CLASS = 31_031;

/**
 * Commit order of events (CONTRACT "Events feed": `after=<event_id>` returns the events committed after that one, in
 * the order deliveries follow; issue 31 "no event skipped, none twice").
 *
 * `webhook_events.seq` is a sequence, assigned when a row is inserted, not when its transaction commits. Without
 * more, transaction A could take seq 10, transaction B seq 11, B commit, a feed reader page past 11, and only then A
 * commit: the reader, continuing after 11, would never see 10. So every statement that inserts events first takes a
 * transaction-scoped advisory lock of the event's company (this CTE: `pg_advisory_xact_lock(EVENT_ORDER_LOCK_CLASS,
 * hashtext(company_id))`), and the insert reads from this CTE, so no `seq` is drawn before the lock is granted. The
 * lock is held until the transaction (or the autocommitted statement) ends, and PostgreSQL releases a transaction's
 * locks only after its commit is visible to every new snapshot. Hence, within one company, the transaction that
 * draws a higher seq draws it after every lower-seq transaction has committed or rolled back: seq order is commit
 * order, and a reader whose snapshot sees an event sees every retained event of that company with a lower seq.
 * Rolled-back transactions leave gaps, which readers never wait on. Events of different companies never wait for
 * each other (a hashtext collision of two company ids only makes them wait: still exact).
 *
 * Why this and not xid8 with a snapshot horizon (store `pg_current_xact_id()` and let readers return only events
 * below `pg_snapshot_xmin(pg_current_snapshot())`): the horizon is database-wide, so any long transaction anywhere
 * (a migration, a report, a stuck session) would stall every company's feed, and ordering within the horizon would
 * still need commit order, which PostgreSQL does not expose. The lock costs only the writes of one company: from the
 * moment one inserts its events until it commits, the next write of that company waits (measured: see the events
 * feed test and the issue 31 report). The lock is taken as late as possible, after the statement has changed and
 * locked its rows, so the serialized window is the event insert, the fan-out and the commit; nothing after it waits
 * for a lock that a write waiting on this one could hold.
 * @param name the CTE's name (unique within the statement).
 * @param companyParam the SQL parameter of the company id, e.g. `$2`.
 */
export function eventOrderLockCte(name: string, companyParam: string): string {
  return `${name} AS MATERIALIZED (
       SELECT pg_advisory_xact_lock(${EVENT_ORDER_LOCK_CLASS}, hashtext(${companyParam}::text)) AS locked
     )`;
}

/**
 * Takes the company's event-order lock (`eventOrderLockCte`) in its own statement, for interactive transactions that
 * insert events with the Prisma client: call it right before the insert, in the same transaction.
 */
export async function lockEventOrder(tx: Prisma.TransactionClient, companyId: string): Promise<void> {
  await tx.$queryRawUnsafe(`SELECT pg_advisory_xact_lock(${EVENT_ORDER_LOCK_CLASS}, hashtext($1::text))::text AS locked`, companyId);
}

/**
 * Inserts one outbox event inside the caller's transaction (after taking the company's event-order lock,
 * `lockEventOrder`); returns its id and `seq`. The API's writes insert their events in their own statement
 * (`insertEventsCte`); this and `fanOutEvent` serve writes made in an interactive transaction (the webhook tests'
 * event fixtures).
 */
export async function insertEvent(
  tx: Prisma.TransactionClient,
  event: { companyId: string; type: string; resourceId: string; payload: Prisma.InputJsonValue },
) {
  await lockEventOrder(tx, event.companyId);
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
 * The fan-out as data-modifying CTEs, for statements that write their events themselves (db/items.ts, db/tasks.ts)
 * and for `fanOutEvent`: `subscribers` and `queued` queue one pending delivery per active (neither disabled nor
 * paused) subscription of the company given by the SQL parameter `companyParam` (e.g. `$2`) to the name of each row
 * of the CTE `eventsCte` (columns id, type, seq, payload: the event's JSON body) whose filter the event passes
 * (CONTRACT "Subscription filters (REST hooks)"). Append to a `WITH` list after `eventsCte`; `queued` returns one row
 * per delivery (`id`, `subscription_id`), and `woken` writes the wake-ups that tell the dispatcher.
 *
 * Filters are applied here, in the statement that writes the deliveries, so an excluded event creates no delivery row
 * at all. What the filter compares comes from the event body itself (`fan_events`), so every event of every write
 * path is filtered alike:
 * - `filter_pipeline_id`: an item event's `pipeline_id`; a task event's linked item's pipeline (`item_id` looked up
 *   in the company's items in this statement's snapshot; a task without an item matches no pipeline filter), or,
 *   for a task event whose body has no `item_id`, the pipeline given by `unlinkedTaskPipelineParam` when the
 *   statement passes one (an item deletion: the pipeline of the item its tasks were linked to); a note event's
 *   item's pipeline (CONTRACT "Notes"; the item always exists when a note event is written: a deleted item's notes
 *   get no event);
 * - `filter_stage_id`: an item event's `stage_id` (the stage after the change);
 * - `filter_fields` (non-empty): overlaps the event's `changed_fields`.
 * Cost: the company's subscriptions are read through the partial expression index
 * `webhook_subscriptions_fan_out_idx` (company_id, coalesce(filter_pipeline_id, '')) with `= ANY` of '' and the
 * events' pipelines, so subscriptions filtered to other pipelines are never read nor locked; the remaining conditions
 * run before the row lock, so an excluded subscription is not locked either.
 *
 * The subscriptions are read `FOR KEY SHARE`: an unsubscribe (or a 410 Gone) racing with the statement either
 * committed first (the subscription is skipped) or waits for this commit and then removes the new delivery with its
 * subscription (ON DELETE CASCADE) — never a foreign-key failure of the change itself.
 */
export function fanOutCtes(eventsCte: string, companyParam: string, unlinkedTaskPipelineParam?: string): string {
  return `fan_events AS MATERIALIZED (
       SELECT e.id, e.type, e.seq,
         ${eventPipelineSql("e", companyParam, unlinkedTaskPipelineParam)} AS pipeline_id,
         CASE WHEN e.type LIKE 'item.%' THEN e.payload::json ->> 'stage_id' END AS stage_id,
         ARRAY(SELECT json_array_elements_text(
           CASE WHEN json_typeof(e.payload::json -> 'changed_fields') = 'array' THEN e.payload::json -> 'changed_fields' END
         )) AS changed_fields
       FROM ${eventsCte} e
     ), subscribers AS (
       SELECT s.id, s.events, s.filter_pipeline_id, s.filter_stage_id, s.filter_fields FROM webhook_subscriptions s
       WHERE s.company_id = ${companyParam} AND s.disabled_at IS NULL AND s.paused_at IS NULL
         AND COALESCE(s.filter_pipeline_id, '') = ANY (ARRAY(SELECT '' UNION SELECT pipeline_id FROM fan_events WHERE pipeline_id IS NOT NULL))
         AND s.events && ARRAY(SELECT type FROM fan_events)
         AND EXISTS (SELECT 1 FROM fan_events f WHERE ${FILTER_PASSES})
       FOR KEY SHARE
     ), queued AS (
       INSERT INTO webhook_deliveries (id, event_id, subscription_id, seq)
       SELECT gen_random_uuid()::text, f.id, s.id, f.seq
       FROM fan_events f JOIN subscribers s ON ${FILTER_PASSES}
       RETURNING id, subscription_id
     ), ${WAKEUPS_CTE}`;
}

/**
 * SQL: the pipeline a `pipeline_id` filter compares for the event row aliased `alias` (columns `type`, `payload`) of
 * company `companyParam` (CONTRACT "Subscription filters", "Events feed"): a task event's linked item's pipeline (its
 * body's `item_id` looked up in the company's items; none when the task has no item, or, when
 * `unlinkedTaskPipelineParam` is given, that parameter's pipeline); a note event's item's pipeline (its body's
 * `item_id` looked up the same way); any other event's body `pipeline_id` (item events). An erased body has none
 * (an item's names no pipeline; a deleted note's keeps `item_id`, but CONTRACT "Events feed": an erased event never
 * matches). Null when there is none: it matches no filter.
 */
export function eventPipelineSql(alias: string, companyParam: string, unlinkedTaskPipelineParam?: string): string {
  const linkedItemPipeline = `(SELECT fi.pipeline_id FROM items fi WHERE fi.id = (${alias}.payload::json ->> 'item_id') AND fi.company_id = ${companyParam})`;
  const taskPipeline = unlinkedTaskPipelineParam
    ? `CASE WHEN ${alias}.payload::json ->> 'item_id' IS NULL THEN ${unlinkedTaskPipelineParam}::text ELSE ${linkedItemPipeline} END`
    : linkedItemPipeline;
  return `CASE WHEN ${alias}.type LIKE 'task.%' THEN ${taskPipeline}
           WHEN ${alias}.type LIKE 'note.%' AND ${alias}.payload::json -> 'erased' IS NULL THEN ${linkedItemPipeline}
           ELSE ${alias}.payload::json ->> 'pipeline_id' END`;
}

/**
 * CONTRACT "Subscription filters": subscription `s` (events and filter columns) takes event `f` of `fan_events`: it
 * subscribes to its name, and each filter it has holds (no filter, no condition).
 */
const FILTER_PASSES = `f.type = ANY (s.events)
           AND (s.filter_pipeline_id IS NULL OR s.filter_pipeline_id = f.pipeline_id)
           AND (s.filter_stage_id IS NULL OR s.filter_stage_id = f.stage_id)
           AND (cardinality(s.filter_fields) = 0 OR s.filter_fields && f.changed_fields)`;

/** An outbox event a statement writes itself: its id (uuid v7), name and the exact JSON body to deliver. */
export interface OutboxEventToInsert {
  id: string;
  type: string;
  /** Stored as `JSON.stringify` writes it (key order kept: the column is `json`, not `jsonb`). */
  payload: unknown;
}

/**
 * The parameters `eventsCte` reads, in this order: event ids, names, JSON texts and actors (four `text[]`; the
 * actor of each is `actorParam()`, the request's, read now).
 */
export function eventParams(events: readonly OutboxEventToInsert[]): [string[], string[], string[], (string | null)[]] {
  const actor = actorParam();
  return [events.map((e) => e.id), events.map((e) => e.type), events.map((e) => JSON.stringify(e.payload)), events.map(() => actor)];
}

/**
 * The actor of the current request (db/event-actor.ts) as one SQL text parameter, for the statements that insert
 * events: JSON `{ type, id, label }`, or null when none is known. `ACTOR_COLUMNS` / `actorValues` store it.
 */
export function actorParam(): string | null {
  const actor = currentEventActor();
  return actor ? JSON.stringify({ type: actor.type, id: actor.id, label: actor.label }) : null;
}

/** The `webhook_events` columns that record who caused an event, in `actorValues`' order. */
export const ACTOR_COLUMNS = "actor_type, actor_id, actor_label";

/** SQL: the values of `ACTOR_COLUMNS` from the SQL expression `actor` (an `actorParam()` text; null: all null). */
export function actorValues(actor: string): string {
  return `(${actor})::json ->> 'type', (${actor})::json ->> 'id', (${actor})::json ->> 'label'`;
}

/**
 * The CTE `name` that writes the events given as the `text[]` parameters `first` .. `first + 3`
 * (`eventParams`: ids, names, payloads, actors) about the row of the one-row CTE `resourceCte` (column `id`), for the company
 * of parameter `companyParam`; nothing when `resourceCte` is empty. The company's event-order lock is taken first
 * (the CTE `<name>_order`, `eventOrderLockCte`), once the resource row is written. The events are inserted in array
 * order, so their `seq` follows it. Returns (id, type, seq, payload), ready for `fanOutCtes(name, companyParam)`.
 */
export function insertEventsCte(name: string, resourceCte: string, companyParam: string, first: number): string {
  return `${eventOrderLockCte(`${name}_order`, companyParam)}, ${name} AS (
       INSERT INTO webhook_events (id, company_id, type, resource_id, payload, ${ACTOR_COLUMNS})
       SELECT e.id, ${companyParam}, e.type, ${resourceCte}.id, e.payload::json, ${actorValues("e.actor")}
       FROM ${resourceCte} CROSS JOIN ${name}_order
         CROSS JOIN unnest($${first}::text[], $${first + 1}::text[], $${first + 2}::text[], $${first + 3}::text[])
           WITH ORDINALITY AS e(id, type, payload, actor, n)
       ORDER BY e.n
       RETURNING id, type, seq, payload
     )`;
}

/**
 * Queues one pending delivery of the stored event `event.id` per active subscription of that company and event name
 * whose filter it passes, in one statement inside the caller's transaction (`fanOutCtes`, reading the stored body).
 * @returns the number of deliveries queued.
 */
export async function fanOutEvent(
  tx: Prisma.TransactionClient,
  event: { id: string; seq: bigint; companyId: string; type: string },
): Promise<number> {
  const rows = await tx.$queryRawUnsafe<{ deliveries: number }[]>(
    `WITH event AS (SELECT id, type, seq, payload FROM webhook_events WHERE id = $1 AND company_id = $2), ${fanOutCtes("event", "$2")}
     SELECT count(*)::int AS deliveries FROM queued`,
    event.id,
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
     ), ${eventOrderLockCte("event_order", "$2")}, event AS (
       INSERT INTO webhook_events (id, company_id, type, resource_id, payload, ${ACTOR_COLUMNS})
       SELECT $6, $2, $3, $4, $5::json, ${actorValues("$7::text")} FROM target CROSS JOIN event_order
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
    actorParam(),
  );
  return rows[0]?.id ?? null;
}

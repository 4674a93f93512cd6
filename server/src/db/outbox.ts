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
  const linkedItemPipeline = `(SELECT fi.pipeline_id FROM items fi WHERE fi.id = (e.payload::json ->> 'item_id') AND fi.company_id = ${companyParam})`;
  const taskPipeline = unlinkedTaskPipelineParam
    ? `CASE WHEN e.payload::json ->> 'item_id' IS NULL THEN ${unlinkedTaskPipelineParam}::text ELSE ${linkedItemPipeline} END`
    : linkedItemPipeline;
  return `fan_events AS MATERIALIZED (
       SELECT e.id, e.type, e.seq,
         CASE WHEN e.type LIKE 'task.%' THEN ${taskPipeline}
           WHEN e.type LIKE 'note.%' THEN ${linkedItemPipeline}
           ELSE e.payload::json ->> 'pipeline_id' END AS pipeline_id,
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
 * The parameters `eventsCte` reads, in this order: event ids, names and JSON texts (three `text[]`).
 */
export function eventParams(events: readonly OutboxEventToInsert[]): [string[], string[], string[]] {
  return [events.map((e) => e.id), events.map((e) => e.type), events.map((e) => JSON.stringify(e.payload))];
}

/**
 * The CTE `name` that writes the events given as the `text[]` parameters `first`, `first + 1`, `first + 2`
 * (`eventParams`: ids, names, payloads) about the row of the one-row CTE `resourceCte` (column `id`), for the company
 * of parameter `companyParam`; nothing when `resourceCte` is empty. The events are inserted in array order, so their
 * `seq` follows it. Returns (id, type, seq, payload), ready for `fanOutCtes(name, companyParam)`.
 */
export function insertEventsCte(name: string, resourceCte: string, companyParam: string, first: number): string {
  return `${name} AS (
       INSERT INTO webhook_events (id, company_id, type, resource_id, payload)
       SELECT e.id, ${companyParam}, e.type, ${resourceCte}.id, e.payload::json
       FROM ${resourceCte} CROSS JOIN unnest($${first}::text[], $${first + 1}::text[], $${first + 2}::text[]) WITH ORDINALITY AS e(id, type, payload, n)
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

/**
 * The console's Developers part, Events (CONTRACT "Console: events, activity and charts"): the company's events feed
 * with its filters (event name, the item, task or note, a time range), newest first, and one event with its body (or
 * that it was erased) and every delivery of it to each endpoint, with their attempts, and a resend.
 *
 * The list reads the events feed's own query (db/events-feed.ts `readFeed`: keyset pages by `seq`, each read
 * examining a bounded number of events, so a page can come back short while older events remain) and pages with the
 * feed's cursor (services/events-feed.ts). A time range narrows the seq range read (db/events-feed.ts `seqWindow`)
 * and is checked on every row. Resend is the webhook endpoints' "Resend" (services/webhook-subscriptions.ts
 * `requeueDelivery`, the API's redeliver).
 *
 * Every function is scoped to the caller's company: another company's event or delivery is 404 `not_found`.
 * Console users see events of every name (members too: they read, only owners and admins resend, which the console
 * enforces by role).
 */
import { EVENT_NAMES, dateTimeField, idField, parseInput, type EventName } from "@stageline/shared";
import { z } from "zod";
import type { AppContext } from "../context";
import { findFeedEvent, readFeed, seqWindow, type FeedEventRow } from "../db/events-feed";
import {
  countDeliveriesByEvent,
  findEventDeliverySubscription,
  listEventDeliveries,
  listRecentAttempts,
  type EventDeliveryRow,
  type RecentAttemptRow,
} from "../db/webhook-deliveries-log";
import { notFound } from "./errors";
import { decodeSeqCursor, encodeSeqCursor } from "./events-feed";
import { requeueDelivery } from "./webhook-subscriptions";

/** Events per page of the console's Events list. */
export const EVENTS_PAGE_SIZE = 50;

/** Deliveries per page of an event's page (an event has at most one per subscription). */
export const EVENT_DELIVERIES_PAGE_SIZE = 50;

/** Attempts an event's page shows per delivery, the newest (the delivery's own page in Webhooks shows more). */
export const ATTEMPTS_PER_DELIVERY = 10;

/**
 * How much longer than the time range the seq range read for it reaches at each end (db/events-feed.ts
 * `seqWindow`): the longest a transaction that writes events may run. Prisma's interactive transactions time out
 * after 5 s (its default, unchanged here) and the raw writes are single statements, so 5 minutes is ample.
 */
export const TIME_RANGE_SLACK_MS = 5 * 60_000;

/**
 * The Events list's filters as the console's query string gives them: `event` (one event name), `resource_id` (an
 * item, task or note id), `since` (inclusive) and `until` (exclusive), ISO 8601 date-times with a zone. All optional.
 */
export const EventFilterSchema = z
  .object({
    event: z
      .enum(EVENT_NAMES, { error: `event must be one of: ${EVENT_NAMES.join(", ")}.` })
      .optional(),
    resource_id: idField("resource_id").optional(),
    since: dateTimeField("since").optional(),
    until: dateTimeField("until").optional(),
  })
  .refine((f) => f.since === undefined || f.until === undefined || new Date(f.until).getTime() > new Date(f.since).getTime(), {
    error: "until must be after since.",
    path: ["until"],
  });
/** Parsed filters of the Events list. */
export type EventFilter = z.infer<typeof EventFilterSchema>;

/**
 * Reads the Events list's filters.
 * @throws DomainError 400 `validation_failed` naming each bad field (`event`, `resource_id`, `since`, `until`).
 */
export function parseEventFilter(input: { event?: string; resource_id?: string; since?: string; until?: string }): EventFilter {
  return parseInput(EventFilterSchema, input, "events filter");
}

/** How many deliveries of an event are in each state. */
export interface DeliveryCounts {
  pending: number;
  succeeded: number;
  failed: number;
}

/** One line of the Events list. */
export interface EventListRow {
  id: string;
  type: EventName;
  resourceId: string;
  occurredAt: Date;
  erased: boolean;
  deliveries: DeliveryCounts;
}

/** One page of the Events list: `next` is the cursor of the following page (null: none follows). */
export interface EventListPage {
  events: EventListRow[];
  next: string | null;
}

const countsOf = (byState: Record<string, number> | undefined): DeliveryCounts => ({
  pending: byState?.pending ?? 0,
  succeeded: byState?.succeeded ?? 0,
  failed: byState?.failed ?? 0,
});

/**
 * One page of company `companyId`'s events, newest first (commit order), {@link EVENTS_PAGE_SIZE} a page at most,
 * matching `filter`, starting below `cursor` (from the previous page's `next`). A page may be short, even empty,
 * while `next` is set: a read examines a bounded number of events (db/events-feed.ts), and the next page goes on
 * from there. Each event comes with its deliveries counted by state.
 * @throws DomainError 400 `validation_failed` for a cursor the console did not issue.
 */
export async function listCompanyEvents(ctx: AppContext, companyId: string, filter: EventFilter, cursor?: string): Promise<EventListPage> {
  const since = filter.since === undefined ? null : new Date(filter.since);
  const until = filter.until === undefined ? null : new Date(filter.until);
  const window = since || until ? await seqWindow(ctx.prisma, companyId, { since, until }, TIME_RANGE_SLACK_MS) : { from: null, to: null };
  const after = cursor === undefined ? null : decodeSeqCursor(cursor);
  const from = after !== null && window.from !== null ? (after < window.from ? after : window.from) : (after ?? window.from);
  const scan = await readFeed(ctx.prisma, companyId, {
    direction: "desc",
    from,
    to: window.to,
    types: filter.event ? [filter.event] : EVENT_NAMES,
    resourceId: filter.resource_id ?? null,
    pipelineId: null,
    limit: EVENTS_PAGE_SIZE,
    occurredFrom: since,
    occurredBefore: until,
  });
  const counts = await countDeliveriesByEvent(ctx.prisma, scan.rows.map((r) => r.id));
  const events = scan.rows.map((r) => ({
    id: r.id,
    type: r.type as EventName,
    resourceId: r.resourceId,
    occurredAt: r.createdAt,
    erased: r.erasedAt !== null,
    deliveries: countsOf(counts.get(r.id)),
  }));
  const last = scan.lastExamined ?? scan.rows[scan.rows.length - 1];
  return { events, next: scan.more && last ? encodeSeqCursor(last.seq) : null };
}

/** A delivery of an event with its newest attempts (newest first). */
export type EventDelivery = EventDeliveryRow & { attempts: RecentAttemptRow[] };

/** An event's page: the event, its body as delivered, and one page of its deliveries. */
export interface EventDetail {
  event: {
    id: string;
    type: EventName;
    resourceId: string;
    occurredAt: Date;
    /** When its body was erased (its item or note was deleted; CONTRACT "Item deletion and erasure"), or null. */
    erasedAt: Date | null;
    /** The body its deliveries carry (once erased, the erased body). */
    payload: unknown;
  };
  deliveries: EventDelivery[];
  /** The delivery id to continue after (the next page), or null. */
  next: string | null;
}

/** Ids the console looks up: what the API's ids look like (uuid v7), bounded; anything else is not found. */
const ID_PATTERN = /^[A-Za-z0-9_-]{1,100}$/;

/**
 * Company `companyId`'s event `eventId`.
 * @throws DomainError 404 `not_found` when it is not a retained event of the company.
 */
async function requireEvent(ctx: AppContext, companyId: string, eventId: string): Promise<FeedEventRow> {
  const row = ID_PATTERN.test(eventId) ? await findFeedEvent(ctx.prisma, companyId, eventId) : null;
  if (!row) throw notFound("Event", eventId);
  return row;
}

/**
 * Company `companyId`'s event `eventId` with its body and one page of its deliveries (queued order, after delivery
 * `afterDelivery`, {@link EVENT_DELIVERIES_PAGE_SIZE} a page), each with the endpoint it goes to and its newest
 * {@link ATTEMPTS_PER_DELIVERY} attempts.
 * @throws DomainError 404 `not_found` when the event is not a retained event of the company.
 */
export async function getCompanyEvent(ctx: AppContext, companyId: string, eventId: string, afterDelivery?: string): Promise<EventDetail> {
  const row = await requireEvent(ctx, companyId, eventId);
  const after = afterDelivery !== undefined && ID_PATTERN.test(afterDelivery) ? afterDelivery : null;
  const rows = await listEventDeliveries(ctx.prisma, companyId, row.id, after, EVENT_DELIVERIES_PAGE_SIZE + 1);
  const page = rows.slice(0, EVENT_DELIVERIES_PAGE_SIZE);
  const attempts = await listRecentAttempts(ctx.prisma, page.map((d) => d.id), ATTEMPTS_PER_DELIVERY);
  return {
    event: { id: row.id, type: row.type as EventName, resourceId: row.resourceId, occurredAt: row.createdAt, erasedAt: row.erasedAt, payload: row.payload },
    deliveries: page.map((d) => ({ ...d, attempts: attempts.filter((a) => a.deliveryId === d.id) })),
    next: rows.length > EVENT_DELIVERIES_PAGE_SIZE ? page[page.length - 1]!.id : null,
  };
}

/**
 * "Resend" on an event's page: puts delivery `deliveryId` of company `companyId`'s event `eventId` back in the queue,
 * due now, its attempts kept (the webhook endpoints' "Resend" and the API's redeliver: the same service).
 * @throws DomainError 404 `not_found` when the event is not the company's or the delivery is not one of its
 *   deliveries; 410 `payload_erased` when the event's body was erased (nothing left to send); 422
 *   `invalid_reference` when the dispatcher has disabled the endpoint.
 */
export async function resendEventDelivery(ctx: AppContext, companyId: string, eventId: string, deliveryId: string): Promise<void> {
  const event = await requireEvent(ctx, companyId, eventId);
  const subscriptionId = ID_PATTERN.test(deliveryId) ? await findEventDeliverySubscription(ctx.prisma, companyId, event.id, deliveryId) : null;
  if (!subscriptionId) throw notFound("Webhook delivery", deliveryId);
  await requeueDelivery(ctx, { companyId }, subscriptionId, deliveryId);
}

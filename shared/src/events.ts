/**
 * CONTRACT "Events feed (catch up without a public URL)": the feed of a company's retained events
 * (`GET /v1/ext/events`, `GET /v1/ext/events/{event_id}`) and the replay of a subscription's deliveries
 * (`POST /v1/ext/webhooks/{webhook_id}/replay`). Generic over {@link EVENT_NAMES}: an event name added to the
 * catalogue joins the feed, its `event` filter and its scope rule ({@link eventReadScope}) with no change here.
 */
import { z } from "zod";
import { dateTimeField, idField, strictBody } from "./fields";
import { CursorSchema, LimitSchema } from "./pagination";
import { queryParam } from "./query-params";
import type { Scope } from "./scopes";
import { EVENT_NAMES, type EventName } from "./webhooks";

/**
 * CONTRACT "Events feed": the scope a key needs to read events named `event`: `tasks:read` for `task.*`, `items:read`
 * for every other name (item events and note events, `note.*`, which are about an item).
 */
export function eventReadScope(event: string): Scope {
  return event.startsWith("task.") ? "tasks:read" : "items:read";
}

/** The event names a key with `scopes` can read in the feed, in catalogue order (empty: it can read none). */
export function readableEventNames(scopes: readonly string[]): EventName[] {
  return EVENT_NAMES.filter((name) => scopes.includes(eventReadScope(name)));
}

/** The `event` filter's syntax: one or more catalogue names separated by commas (no spaces). */
const EVENT_NAME_ALTERNATIVES = EVENT_NAMES.map((name) => name.replace(/\./g, "\\.")).join("|");
const EVENT_LIST_PATTERN = new RegExp(`^(?:${EVENT_NAME_ALTERNATIVES})(?:,(?:${EVENT_NAME_ALTERNATIVES}))*$`);
const EVENT_LIST_MESSAGE = `event must be one or more of these names, separated by commas: ${EVENT_NAMES.join(", ")}.`;

/**
 * CONTRACT "Events feed" + "Lists": query of GET /v1/ext/events. Newest first by default, keyset-paged with `cursor`;
 * with `after` (an `event_id`), the events committed after that one, oldest first. `event` (comma-separated names;
 * an unknown name is a 400 listing the valid ones), `resource_id` and `pipeline_id` filter (AND).
 */
export const EventListQuerySchema = z.object({
  event: queryParam(
    z
      .string({ error: EVENT_LIST_MESSAGE })
      .regex(EVENT_LIST_PATTERN, { error: EVENT_LIST_MESSAGE })
      .transform((value) => [...new Set(value.split(","))] as EventName[])
      .optional()
      .meta({ description: `Comma-separated event names: ${EVENT_NAMES.join(", ")}.` }),
  ),
  resource_id: queryParam(idField("resource_id").optional().meta({ description: "Only events about this item, task or note." })),
  pipeline_id: queryParam(
    idField("pipeline_id")
      .optional()
      .meta({ description: "Only item events of items of this pipeline, task events of tasks linked to an item of it and note events of notes on an item of it (erased events carry no pipeline and never match)." }),
  ),
  after: queryParam(
    idField("after")
      .optional()
      .meta({
        description:
          "An `event_id`: the events committed after it, oldest first, in the order deliveries follow. An id no longer retained is `410 cursor_expired`. Not combined with `cursor`.",
      }),
  ),
  limit: LimitSchema,
  cursor: CursorSchema,
});
/** Parsed query of GET /v1/ext/events. */
export type EventListQuery = z.infer<typeof EventListQuerySchema>;

/**
 * The body of one event: a delivery's body of that event (its schema per name: the document's `webhooks` section),
 * or the erased body (`{ item_id, erased: true }`; a note's `{ note_id, item_id, erased: true }`).
 */
const FeedEventDataSchema = z.record(z.string(), z.unknown());

/**
 * CONTRACT "Events feed": one retained event. `data` is exactly the body a delivery of it carries (once erased, the
 * erased body `{ item_id, erased: true }`, a note's `{ note_id, item_id, erased: true }`); `event_id` is the
 * deliveries' `webhook-id`.
 */
export const FeedEventSchema = z.object({
  event_id: z.string().meta({ description: "The event's id: the `webhook-id` of its deliveries." }),
  event: z.enum(EVENT_NAMES),
  occurred_at: z.iso.datetime({ offset: true }).meta({ description: "When the change that caused the event was written." }),
  resource_id: z.string().meta({ description: "The item, task or note the event is about." }),
  data: FeedEventDataSchema.meta({ description: "Exactly the body a delivery of this event carries (the erased body after its item was deleted)." }),
});
/** One event of the feed. */
export type FeedEvent = z.infer<typeof FeedEventSchema>;

/** CONTRACT "Events feed": the most deliveries one replay call queues again (the oldest of its range first). */
export const MAX_REPLAY_DELIVERIES = 1000;

/**
 * CONTRACT "Events feed": body of POST /v1/ext/webhooks/{webhook_id}/replay. `since` (inclusive) and `until`
 * (exclusive, default now) bound the events' `occurred_at`; `only_failed` (default true) replays failed deliveries
 * only, false replays delivered ones as well (pending ones are queued already).
 */
export const WebhookReplaySchema = strictBody({
  since: dateTimeField("since"),
  until: dateTimeField("until").optional(),
  only_failed: z.boolean({ error: "only_failed must be true or false." }).default(true),
}).refine((body) => body.until === undefined || new Date(body.until).getTime() > new Date(body.since).getTime(), {
  error: "until must be after since.",
  path: ["until"],
});
/** Parsed replay body. */
export type WebhookReplay = z.infer<typeof WebhookReplaySchema>;

/** CONTRACT "Events feed": the replay's `202` body: how many deliveries were queued again (at most {@link MAX_REPLAY_DELIVERIES}). */
export const WebhookReplayResultSchema = z.object({
  count: z
    .number()
    .int()
    .min(0)
    .max(MAX_REPLAY_DELIVERIES)
    .meta({ description: `Deliveries queued again. ${MAX_REPLAY_DELIVERIES} means the cap was reached: call again to queue the rest.` }),
});
/** The replay's result. */
export type WebhookReplayResult = z.infer<typeof WebhookReplayResultSchema>;

import { z } from "zod";
import { httpUrlField, idField, strictBody, textField } from "./fields";
import { ItemSchema } from "./items";
import { NOTE_CHANGE_FIELDS, NoteSchema } from "./notes";
import { PageQuerySchema } from "./pagination";
import { queryParam } from "./query-params";
import { TaskSchema } from "./tasks";

const timestamp = z.iso.datetime({ offset: true });

/** CONTRACT "Events and deliveries": every event name a REST hook can subscribe to. */
export const EVENT_NAMES = [
  "item.created",
  "item.updated",
  "item.stage_changed",
  "item.deleted",
  "task.created",
  "task.updated",
  "task.completed",
  "note.created",
  "note.updated",
  "note.deleted",
] as const;
/** One event name. */
export type EventName = (typeof EVENT_NAMES)[number];

/** CONTRACT "Events and deliveries": an event name (for responses; subscribe bodies take any string, see WebhookSubscribeSchema). */
export const EventNameSchema = z.enum(EVENT_NAMES);

/** Type guard: is `value` one of {@link EVENT_NAMES}? The server answers other names with 422 and `valid_events`. */
export function isEventName(value: unknown): value is EventName {
  return typeof value === "string" && (EVENT_NAMES as readonly string[]).includes(value);
}

/** CONTRACT "Subscription filters": the events whose subscriptions may name `filter.fields` (changed-field filter). */
export const FIELD_FILTER_EVENTS = ["item.updated", "task.updated", "note.updated"] as const;

/** CONTRACT "Subscription filters": at most this many field names in `filter.fields`. */
export const MAX_FILTER_FIELDS = 100;

/**
 * CONTRACT "Subscription filters (REST hooks)": the optional server-side filter of a subscription. `pipeline_id`: only
 * items of that pipeline (item events) or tasks linked to an item of it (task events). `stage_id` (needs
 * `pipeline_id`; item events only): items in that stage after the change. `fields` (only with `item.updated` or
 * `task.updated`): only when at least one named field is in `changed_fields` (item: `name`, `stage`, `status`,
 * `contact_id`, `source` or a custom field key; task: TASK_CHANGE_FIELDS). Shape rules are a 400; ids and field keys
 * that do not resolve for the company are `422 invalid_reference` (the server's check). Unknown members are a 400.
 */
export const WebhookFilterSchema = strictBody({
  pipeline_id: idField("pipeline_id").optional(),
  stage_id: idField("stage_id").optional(),
  fields: z
    .array(textField("fields[]"), { error: "fields must be an array of field names." })
    .min(1, { error: "fields must name at least one field (leave it out for every change)." })
    .max(MAX_FILTER_FIELDS, { error: `fields may name at most ${MAX_FILTER_FIELDS} fields.` })
    .optional(),
}).refine((filter) => filter.stage_id === undefined || filter.pipeline_id !== undefined, {
  error: "filter.stage_id needs filter.pipeline_id (the pipeline the stage belongs to).",
  path: ["stage_id"],
});
/** A subscription filter. */
export type WebhookFilter = z.infer<typeof WebhookFilterSchema>;

/** CONTRACT "Subscription filters": a subscription's filter as returned (`null` on the subscription when none). */
export const WebhookFilterResponseSchema = z.object({
  pipeline_id: z.string().optional(),
  stage_id: z.string().optional(),
  fields: z.array(z.string()).optional(),
});

/**
 * Spec "REST hooks" (POST /v1/ext/webhooks: `target_url`, `event`, both required). `event` parses as any non-empty
 * string (the document states the enum of EVENT_NAMES): an unknown name is a well-formed body with a bad reference, so the server answers 422 listing
 * `valid_events` (CONTRACT "Events and deliveries"). Whether `http`/loopback targets are allowed depends on
 * NODE_ENV and is also the server's call. Unknown fields are a 400.
 */
export const WebhookSubscribeSchema = strictBody({
  target_url: httpUrlField("target_url"),
  // CONTRACT "HTTP semantics": the document states the enum of event names, so a generated client sends only those.
  event: textField("event").meta({
    override: ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
      for (const key of Object.keys(jsonSchema)) delete jsonSchema[key];
      Object.assign(jsonSchema, {
        type: "string",
        enum: [...EVENT_NAMES],
        description: "The event to receive. Another name is a 422 `invalid_reference` whose `valid_events` lists these.",
      });
    },
  }),
  // CONTRACT "Subscription filters": optional; `null` counts as none.
  filter: WebhookFilterSchema.nullable().optional(),
})
  .refine((body) => !body.filter?.fields || (FIELD_FILTER_EVENTS as readonly string[]).includes(body.event), {
    error: `filter.fields can only be used with ${FIELD_FILTER_EVENTS.join(" or ")}.`,
    path: ["filter", "fields"],
  })
  .refine((body) => !body.filter?.stage_id || body.event.startsWith("item."), {
    error: "filter.stage_id can only be used with item events.",
    path: ["filter", "stage_id"],
  });
/** Body of POST /v1/ext/webhooks. */
export type WebhookSubscribe = z.infer<typeof WebhookSubscribeSchema>;

/**
 * Spec "Webhook subscription (REST hook)": a subscription, plus (additive, docs/api/contract.md "Events and
 * deliveries") `disabled_at` and `disabled_reason`: set when the server stopped delivering to it because its target
 * kept failing for the whole retry window (null while it is active). A disabled subscription sends nothing more and
 * does not count toward the 1,000-per-company limit; delete it and subscribe again to resume.
 * Endpoint health (CONTRACT "Events and deliveries", additive): `failing_since`, when the current run of failed
 * attempts began (null while the last attempt succeeded), and `next_attempt_at`, when a failing endpoint is tried
 * next (null when it is not failing, or is disabled). `filter` (CONTRACT "Subscription filters"): the subscription's
 * server-side filter, `null` when none.
 */
export const WebhookSubscriptionSchema = z.object({
  id: z.string(),
  target_url: z.string(),
  event: z.string(),
  created_at: timestamp,
  disabled_at: timestamp.nullable(),
  disabled_reason: z.string().nullable(),
  failing_since: timestamp.nullable(),
  next_attempt_at: timestamp.nullable(),
  filter: WebhookFilterResponseSchema.nullable(),
});
/** A webhook subscription. */
export type WebhookSubscription = z.infer<typeof WebhookSubscriptionSchema>;

/** CONTRACT "Events and deliveries": the signing secret prefix (Standard Webhooks). */
export const WEBHOOK_SECRET_PREFIX = "whsec_";

/** CONTRACT "Events and deliveries": `whsec_` + base64 of 24 to 64 random bytes. */
export const WEBHOOK_SECRET_PATTERN = /^whsec_[A-Za-z0-9+/]{32,88}={0,2}$/;

/**
 * Spec "REST hooks" + CONTRACT "Events and deliveries": the 201 response of POST /v1/ext/webhooks, the subscription
 * plus its signing `secret` (shown once).
 */
export const WebhookSubscriptionCreatedSchema = WebhookSubscriptionSchema.extend({
  secret: z.string().regex(WEBHOOK_SECRET_PATTERN),
});
/** A new subscription with its secret. */
export type WebhookSubscriptionCreated = z.infer<typeof WebhookSubscriptionCreatedSchema>;

/**
 * CONTRACT "Events and deliveries" + "Previous values in update events": delivery body of `item.updated` and
 * `item.stage_changed`, the Item plus `changed_fields` (every changed field: `name`, `stage`, `status`, `contact_id`,
 * `source`, each custom field key) and `previous`: `stage` and `status` (names before the change, always present as
 * before) plus the value before the change of every other field in `changed_fields` (a custom field as its stored
 * value, `null` when it was unset).
 */
export const ItemChangedEventSchema = ItemSchema.extend({
  changed_fields: z.array(z.string()),
  previous: z
    .object({
      stage: z.string(),
      status: z.string(),
    })
    .catchall(z.unknown()),
});
/** Payload of item.updated / item.stage_changed. */
export type ItemChangedEvent = z.infer<typeof ItemChangedEventSchema>;

/**
 * CONTRACT "Previous values in update events": delivery body of `task.updated` and `task.completed`, the Task plus
 * `changed_fields` (TASK_CHANGE_FIELDS that changed) and `previous` (the value before the change of each of them).
 */
export const TaskChangedEventSchema = TaskSchema.extend({
  changed_fields: z.array(z.string()),
  previous: z.record(z.string(), z.unknown()),
});
/** Payload of task.updated / task.completed. */
export type TaskChangedEvent = z.infer<typeof TaskChangedEventSchema>;

/**
 * CONTRACT "Item deletion and erasure": delivery body of `item.deleted`, the item's last state plus `deleted_at`.
 * plus `deleted_note_ids` (the item's notes, deleted and erased with it). Kept only while its deliveries are pending;
 * erased (ErasedPayloadSchema) once the last one ends.
 */
export const ItemDeletedEventSchema = ItemSchema.extend({
  deleted_at: timestamp,
  /** CONTRACT "Notes": the ids of the item's notes, deleted and erased with it (no `note.deleted` each); always present. */
  deleted_note_ids: z.array(z.string()),
});
/** Payload of item.deleted. */
export type ItemDeletedEvent = z.infer<typeof ItemDeletedEventSchema>;

/**
 * CONTRACT "Notes" + "Previous values in update events": delivery body of `note.updated`, the Note plus
 * `changed_fields` (NOTE_CHANGE_FIELDS that changed) and `previous` (the value before the change of each of them).
 */
export const NoteChangedEventSchema = NoteSchema.extend({
  changed_fields: z.array(z.enum(NOTE_CHANGE_FIELDS)),
  previous: z.object({ body: z.string().optional(), pinned: z.boolean().optional() }),
});
/** Payload of note.updated. */
export type NoteChangedEvent = z.infer<typeof NoteChangedEventSchema>;

/**
 * CONTRACT "Notes": delivery body of `note.deleted`, the note's last state plus `deleted_at`. Kept only while its
 * deliveries are pending; erased (ErasedNotePayloadSchema) once the last one ends.
 */
export const NoteDeletedEventSchema = NoteSchema.extend({
  deleted_at: timestamp,
});
/** Payload of note.deleted. */
export type NoteDeletedEvent = z.infer<typeof NoteDeletedEventSchema>;

/** CONTRACT "Notes": the body of an erased note event (a deleted note's earlier events, or its delivered note.deleted). */
export const ErasedNotePayloadSchema = z.object({
  note_id: z.string(),
  item_id: z.string(),
  erased: z.literal(true),
});
/** An erased note event body. */
export type ErasedNotePayload = z.infer<typeof ErasedNotePayloadSchema>;

/**
 * Spec "Events" + CONTRACT "Events and deliveries": the delivery body schema of each event: the Item for
 * `item.created`, the Item with `changed_fields`/`previous` for item updates, the Task for task events.
 */
export const EVENT_PAYLOAD_SCHEMAS = {
  "item.created": ItemSchema,
  "item.updated": ItemChangedEventSchema,
  "item.stage_changed": ItemChangedEventSchema,
  "item.deleted": ItemDeletedEventSchema,
  "task.created": TaskSchema,
  "task.updated": TaskChangedEventSchema,
  "task.completed": TaskChangedEventSchema,
  "note.created": NoteSchema,
  "note.updated": NoteChangedEventSchema,
  "note.deleted": NoteDeletedEventSchema,
} as const satisfies Record<EventName, z.ZodType>;
/** The payload type of event `E`. */
export type EventPayload<E extends EventName = EventName> = z.infer<(typeof EVENT_PAYLOAD_SCHEMAS)[E]>;

/** Spec "REST hooks" (GET /v1/ext/webhooks/sample/{resource}): the resources a sample payload exists for. */
export const SAMPLE_RESOURCES = ["items", "tasks", "notes"] as const;
/** A sample resource path segment. */
export type SampleResource = (typeof SAMPLE_RESOURCES)[number];

/**
 * Spec "REST hooks" (GET /v1/ext/webhooks/sample/{resource}) + CONTRACT "Item deletion and erasure" (item.deleted has
 * its own sample): optional `event` query parameter. Without it the sample is the plain resource (as before); with an
 * event of that resource it is that event's delivery body (`changed_fields`/`previous`, `deleted_at`). An event of the
 * other resource is a 400.
 */
export const SampleQuerySchema = z.object({
  event: queryParam(z.enum(EVENT_NAMES, { error: `event must be one of: ${EVENT_NAMES.join(", ")}.` }).optional()),
});
/** Parsed query of GET /v1/ext/webhooks/sample/{resource}. */
export type SampleQuery = z.infer<typeof SampleQuerySchema>;

/** The sample resource whose payload format an event delivers. */
export const EVENT_RESOURCES = {
  "item.created": "items",
  "item.updated": "items",
  "item.stage_changed": "items",
  "item.deleted": "items",
  "task.created": "tasks",
  "task.updated": "tasks",
  "task.completed": "tasks",
  "note.created": "notes",
  "note.updated": "notes",
  "note.deleted": "notes",
} as const satisfies Record<EventName, SampleResource>;

/** CONTRACT "Events and deliveries": states of a delivery. */
export const DELIVERY_STATES = ["pending", "succeeded", "failed"] as const;
/** A delivery state. */
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/**
 * CONTRACT "Events and deliveries" + "Lists": query of GET /v1/ext/webhooks/{webhook_id}/deliveries, the paging
 * parameters plus an optional `state` filter (empty counts as absent).
 */
export const DeliveryListQuerySchema = PageQuerySchema.extend({
  state: queryParam(z.enum(DELIVERY_STATES, { error: `state must be one of: ${DELIVERY_STATES.join(", ")}.` }).optional()),
});
/** Parsed query of GET /v1/ext/webhooks/{webhook_id}/deliveries. */
export type DeliveryListQuery = z.infer<typeof DeliveryListQuerySchema>;

/** CONTRACT "Events and deliveries" (every attempt is recorded): one attempt of a delivery. */
export const WebhookDeliveryAttemptSchema = z.object({
  attempted_at: timestamp,
  response_status: z.number().int().nullable(),
  duration_ms: z.number().int().min(0),
  response_excerpt: z.string().nullable(),
  error: z.string().nullable(),
  next_attempt_at: timestamp.nullable(),
});
/** A delivery attempt. */
export type WebhookDeliveryAttempt = z.infer<typeof WebhookDeliveryAttemptSchema>;

/**
 * CONTRACT "Events and deliveries": an entry of GET /v1/ext/webhooks/{webhook_id}/deliveries (newest first) and
 * the response of .../deliveries/{delivery_id}/redeliver. `next_attempt_at` is null once the delivery is final.
 */
export const WebhookDeliverySchema = z.object({
  id: z.string(),
  event_id: z.string(),
  event: EventNameSchema,
  state: z.enum(DELIVERY_STATES),
  attempt_count: z.number().int().min(0),
  next_attempt_at: timestamp.nullable(),
  created_at: timestamp,
  completed_at: timestamp.nullable(),
  last_status: z.number().int().nullable(),
  attempts: z.array(WebhookDeliveryAttemptSchema).optional(),
});
/** A delivery log entry. */
export type WebhookDelivery = z.infer<typeof WebhookDeliverySchema>;

/** CONTRACT "Events and deliveries" (Standard Webhooks): unique message id, the receiver's dedupe key. */
export const WEBHOOK_ID_HEADER = "webhook-id";
/** CONTRACT "Events and deliveries" (Standard Webhooks): Unix seconds when the message was signed. */
export const WEBHOOK_TIMESTAMP_HEADER = "webhook-timestamp";
/** CONTRACT "Events and deliveries" (Standard Webhooks): `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`. */
export const WEBHOOK_SIGNATURE_HEADER = "webhook-signature";
/** CONTRACT "Events and deliveries": the event name of the delivery. */
export const WEBHOOK_EVENT_HEADER = "x-webhook-event";

/** The four delivery header names together. */
export const WEBHOOK_HEADERS = {
  id: WEBHOOK_ID_HEADER,
  timestamp: WEBHOOK_TIMESTAMP_HEADER,
  signature: WEBHOOK_SIGNATURE_HEADER,
  event: WEBHOOK_EVENT_HEADER,
} as const;

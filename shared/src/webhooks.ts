import { z } from "zod";
import { httpUrlField, strictBody, textField } from "./fields";
import { ItemSchema } from "./items";
import { PageQuerySchema } from "./pagination";
import { queryParam } from "./query-params";
import { TaskSchema } from "./tasks";

const timestamp = z.iso.datetime({ offset: true });

/** CONTRACT "Events and deliveries": every event name a REST hook can subscribe to. */
export const EVENT_NAMES = [
  "item.created",
  "item.updated",
  "item.stage_changed",
  "task.created",
  "task.updated",
  "task.completed",
] as const;
/** One event name. */
export type EventName = (typeof EVENT_NAMES)[number];

/** CONTRACT "Events and deliveries": an event name (for responses; subscribe bodies take any string, see WebhookSubscribeSchema). */
export const EventNameSchema = z.enum(EVENT_NAMES);

/** Type guard: is `value` one of {@link EVENT_NAMES}? The server answers other names with 422 and `valid_events`. */
export function isEventName(value: unknown): value is EventName {
  return typeof value === "string" && (EVENT_NAMES as readonly string[]).includes(value);
}

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
 * next (null when it is not failing, or is disabled).
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
 * CONTRACT "Events and deliveries": delivery body of `item.updated` and `item.stage_changed`, the Item plus
 * `changed_fields` (field names) and `previous` (`{ stage, status }` names before the change).
 */
export const ItemChangedEventSchema = ItemSchema.extend({
  changed_fields: z.array(z.string()),
  previous: z.object({
    stage: z.string(),
    status: z.string(),
  }),
});
/** Payload of item.updated / item.stage_changed. */
export type ItemChangedEvent = z.infer<typeof ItemChangedEventSchema>;

/**
 * Spec "Events" + CONTRACT "Events and deliveries": the delivery body schema of each event: the Item for
 * `item.created`, the Item with `changed_fields`/`previous` for item updates, the Task for task events.
 */
export const EVENT_PAYLOAD_SCHEMAS = {
  "item.created": ItemSchema,
  "item.updated": ItemChangedEventSchema,
  "item.stage_changed": ItemChangedEventSchema,
  "task.created": TaskSchema,
  "task.updated": TaskSchema,
  "task.completed": TaskSchema,
} as const satisfies Record<EventName, z.ZodType>;
/** The payload type of event `E`. */
export type EventPayload<E extends EventName = EventName> = z.infer<(typeof EVENT_PAYLOAD_SCHEMAS)[E]>;

/** Spec "REST hooks" (GET /v1/ext/webhooks/sample/{resource}): the resources a sample payload exists for. */
export const SAMPLE_RESOURCES = ["items", "tasks"] as const;
/** A sample resource path segment. */
export type SampleResource = (typeof SAMPLE_RESOURCES)[number];

/** The sample resource whose payload format an event delivers. */
export const EVENT_RESOURCES = {
  "item.created": "items",
  "item.updated": "items",
  "item.stage_changed": "items",
  "task.created": "tasks",
  "task.updated": "tasks",
  "task.completed": "tasks",
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

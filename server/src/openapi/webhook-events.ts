/**
 * The OpenAPI 3.1 `webhooks` section (CONTRACT "Events and deliveries", "Previous values in update events"): one
 * entry per event of the catalogue, the delivery a subscriber receives: `POST` to its `target_url` with the event's
 * body (shared EVENT_PAYLOAD_SCHEMAS) and the Standard Webhooks headers. Documents the bodies so generated clients
 * type them (`components.schemas`: ItemChangedEvent, TaskChangedEvent, ...).
 */
import { z } from "zod";
import type { ZodOpenApiPathsObject } from "zod-openapi";
import { EVENT_NAMES, EVENT_PAYLOAD_SCHEMAS, type EventName } from "@stageline/shared";

/**
 * Each event's body as sent. A body is a request body in the document (zod-openapi's `input` context), where a plain
 * object would be rendered open and, shared with a response, split into `Task` and `TaskOutput`: bodies without a
 * catch-all are rendered closed (`.strict()`, as responses render them), which is what the server sends.
 */
const SENT: Record<EventName, z.ZodType> = Object.fromEntries(
  EVENT_NAMES.map((event) => {
    const schema: z.ZodType = EVENT_PAYLOAD_SCHEMAS[event];
    const closed = schema instanceof z.ZodObject && !(schema.def.catchall && !(schema.def.catchall instanceof z.ZodNever));
    return [event, closed ? (schema as z.ZodObject).strict() : schema];
  }),
) as Record<EventName, z.ZodType>;
// One schema object per distinct body, so events that share a body share its component.
SENT["item.stage_changed"] = SENT["item.updated"];
SENT["task.completed"] = SENT["task.updated"];

/** The component name of the update-event bodies (Item and Task are components of the responses already). */
export const EVENT_PAYLOAD_COMPONENTS: Readonly<Record<string, z.ZodType>> = {
  ItemChangedEvent: SENT["item.updated"],
  TaskChangedEvent: SENT["task.updated"],
  ItemDeletedEvent: SENT["item.deleted"],
  NoteChangedEvent: SENT["note.updated"],
  NoteDeletedEvent: SENT["note.deleted"],
};

const deliveryHeaders = z.object({
  "webhook-id": z.string().meta({ description: "The event id, the same on every retry of this delivery (dedupe on it)." }),
  "webhook-timestamp": z.string().meta({ description: "Unix seconds when this attempt was signed." }),
  "webhook-signature": z.string().meta({ description: "`v1,` + base64 HMAC-SHA256 of `id.timestamp.body` with the subscription secret; several, space-separated, during a secret rotation." }),
  "x-webhook-event": z.enum(EVENT_NAMES).meta({ description: "The event name (not signed)." }),
});

/** `operationId` of an event's delivery, e.g. `itemUpdatedEvent`. */
function operationId(event: EventName): string {
  return event.replace(/[._]([a-z])/g, (_m, c: string) => c.toUpperCase()) + "Event";
}

/** The `webhooks` object: one `post` per event name. */
export function webhookEventsSection(): ZodOpenApiPathsObject {
  const section: ZodOpenApiPathsObject = {};
  for (const event of EVENT_NAMES) {
    section[event] = {
      post: {
        operationId: operationId(event),
        summary: `Delivery of ${event}`,
        description:
          `Sent to the \`target_url\` of every subscription to \`${event}\` whose filter the event passes. ` +
          "Answer 2xx to acknowledge; 410 deletes the subscription; 429, 5xx and network errors are retried for up to 3 days.",
        tags: ["Webhooks"],
        security: [],
        requestParams: { header: deliveryHeaders },
        requestBody: { required: true, content: { "application/json": { schema: SENT[event] } } },
        responses: {
          "200": { description: "Acknowledged (any 2xx)." },
          "410": { description: "Gone: the subscription is deleted and nothing more is sent." },
        },
      },
    };
  }
  return section;
}

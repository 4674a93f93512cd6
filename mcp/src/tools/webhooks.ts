/**
 * The webhooks toolset (spec "REST hooks"; CONTRACT "MCP server": off unless asked for): subscribe_webhook,
 * list_webhooks, unsubscribe_webhook, list_webhook_deliveries.
 */
import { z } from "zod";
import {
  DELIVERY_STATES,
  EventNameSchema,
  WebhookDeliverySchema,
  WebhookSubscribeSchema,
  WebhookSubscriptionCreatedSchema,
  WebhookSubscriptionSchema,
  idField,
} from "@stageline/shared";
import { READ, defineTool } from "../tool-definition";
import { IDEMPOTENCY_ADVICE, idempotencyKeyArg } from "./idempotency";
import { countLine, nextCursor, pagingArgs } from "./paging";

const webhookIdArg = { webhook_id: idField("webhook_id") };

export const subscribeWebhook = defineTool({
  name: "subscribe_webhook",
  title: "Subscribe a webhook",
  description: `Have Stageline POST every event of one kind (e.g. item.created) to an https URL, signed with the returned secret (shown once). ${IDEMPOTENCY_ADVICE}`,
  toolset: "webhooks",
  scope: "hooks:manage",
  operations: ["subscribeWebhook"],
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  input: WebhookSubscribeSchema.safeExtend({ event: EventNameSchema, idempotency_key: idempotencyKeyArg }),
  output: WebhookSubscriptionCreatedSchema,
  run: (ops, { idempotency_key, ...body }) => ops.subscribeWebhook(body, idempotency_key),
  summary: (s) => `Subscribed ${s.target_url} to ${s.event} (id ${s.id}); store the secret now, it is not shown again.`,
});

export const listWebhooks = defineTool({
  name: "list_webhooks",
  title: "List webhooks",
  description: "List the company's webhook subscriptions with their health (failing_since, disabled_at), newest first.",
  toolset: "webhooks",
  scope: "hooks:manage",
  operations: ["listWebhooks"],
  annotations: READ,
  input: z.strictObject({ ...pagingArgs }),
  output: z.object({ webhooks: z.array(WebhookSubscriptionSchema), next_cursor: nextCursor }),
  run: async (ops, request) => {
    const page = await ops.listWebhooks(request);
    return { webhooks: page.data, next_cursor: page.next_cursor };
  },
  summary: (r) => countLine(r.webhooks.length, "webhook", r.next_cursor),
});

export const unsubscribeWebhook = defineTool({
  name: "unsubscribe_webhook",
  title: "Unsubscribe a webhook",
  description: "Delete a webhook subscription: nothing more is delivered to its URL.",
  toolset: "webhooks",
  scope: "hooks:manage",
  operations: ["unsubscribeWebhook"],
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  input: z.strictObject(webhookIdArg),
  output: z.object({ webhook_id: z.string(), unsubscribed: z.literal(true) }),
  run: async (ops, { webhook_id }) => {
    await ops.unsubscribeWebhook(webhook_id);
    return { webhook_id, unsubscribed: true as const };
  },
  summary: (r) => `Unsubscribed webhook ${r.webhook_id}.`,
});

export const listWebhookDeliveries = defineTool({
  name: "list_webhook_deliveries",
  title: "List webhook deliveries",
  description: "Show a subscription's deliveries (state, attempts, last status), newest first, to see why events did not arrive.",
  toolset: "webhooks",
  scope: "hooks:manage",
  operations: ["listWebhookDeliveries"],
  annotations: READ,
  input: z.strictObject({ ...webhookIdArg, state: z.enum(DELIVERY_STATES).optional(), ...pagingArgs }),
  output: z.object({ deliveries: z.array(WebhookDeliverySchema), next_cursor: nextCursor }),
  run: async (ops, { webhook_id, ...request }) => {
    const page = await ops.listWebhookDeliveries(webhook_id, request);
    return { deliveries: page.data, next_cursor: page.next_cursor };
  },
  summary: (r) => countLine(r.deliveries.length, "delivery", r.next_cursor).replace("deliverys", "deliveries"),
});

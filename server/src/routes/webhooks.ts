/**
 * REST-hook endpoints under /v1/ext (spec "REST hooks"; CONTRACT.md "Responses", "Scopes and limits", "Events and
 * deliveries"). Everything needs `hooks:manage`, except the sample payloads, which `items:read` (items) or
 * `tasks:read` (tasks) also open. Thin: parse with the contract schema, call the service, shape the response.
 */
import { Router } from "express";
import {
  DeliveryListQuerySchema,
  PageQuerySchema,
  SampleQuerySchema,
  SAMPLE_RESOURCES,
  WebhookSubscribeSchema,
  type SampleResource,
  type WebhookDelivery,
  type WebhookSubscription,
  type WebhookSubscriptionCreated,
  parseInput,
} from "@stageline/shared";
import type { AppContext } from "../context";
import { authOf, requireScope } from "../http/auth";
import { idempotentCreate } from "../http/idempotency";
import { pageWithLink } from "../http/next-page-link";
import { domainError } from "../services/errors";
import { assertScope } from "../services/api-keys";
import { sampleEventPayload } from "../services/sample-events";
import { samplePayload } from "../services/samples";
import {
  listDeliveries,
  listSubscriptions,
  redeliver,
  rotateSecret,
  subscribe,
  toDeliveryResponse,
  toSubscriptionResponse,
  unsubscribe,
} from "../services/webhook-subscriptions";

/** The scope besides `hooks:manage` that opens each sample (CONTRACT.md "Scopes and limits"). */
const SAMPLE_READ_SCOPE = { items: "items:read", tasks: "tasks:read", notes: "items:read" } as const satisfies Record<SampleResource, string>;

/** Path parameters of /webhooks/:webhook_id and below. */
type WebhookPath = { webhook_id: string };
type DeliveryPath = { webhook_id: string; delivery_id: string };

function isSampleResource(value: string): value is SampleResource {
  return (SAMPLE_RESOURCES as readonly string[]).includes(value);
}

/**
 * POST /webhooks (201; takes an `Idempotency-Key`, CONTRACT "Idempotency"), GET /webhooks, DELETE /webhooks/:webhook_id (204), POST /webhooks/:webhook_id/rotate-secret,
 * GET /webhooks/sample/:resource, GET /webhooks/:webhook_id/deliveries and
 * POST /webhooks/:webhook_id/deliveries/:delivery_id/redeliver (202).
 */
export function webhooksRouter(ctx: AppContext): Router {
  const router = Router();

  router.get("/webhooks/sample/:resource", async (req, res) => {
    const { resource } = req.params;
    if (!isSampleResource(resource)) {
      throw domainError("not_found", `There is no sample for "${resource}". Samples exist for: ${SAMPLE_RESOURCES.join(", ")}.`);
    }
    const auth = authOf(req);
    assertScope(auth, ["hooks:manage", SAMPLE_READ_SCOPE[resource]]);
    const query = parseInput(SampleQuerySchema, req.query, "query");
    res.json(
      query.event === undefined
        ? await samplePayload(ctx, auth.company.id, auth.keyId, resource)
        : await sampleEventPayload(ctx, auth.company.id, auth.keyId, resource, query.event),
    );
  });

  router.post(
    "/webhooks",
    requireScope("hooks:manage"),
    idempotentCreate(ctx, async (req, claim) => {
      const input = parseInput(WebhookSubscribeSchema, req.body);
      const body: WebhookSubscriptionCreated = await subscribe(ctx, authOf(req).company.id, input, claim);
      return { status: 201, body };
    }),
  );

  router.get("/webhooks", requireScope("hooks:manage"), async (req, res) => {
    const query = parseInput(PageQuerySchema, req.query, "query string");
    const rows = await listSubscriptions(ctx, authOf(req).company.id, query);
    const body: WebhookSubscription[] = pageWithLink(req, res, rows, query.limit).map(toSubscriptionResponse);
    res.json(body);
  });

  router.delete<WebhookPath>("/webhooks/:webhook_id", requireScope("hooks:manage"), async (req, res) => {
    await unsubscribe(ctx, authOf(req).company.id, req.params.webhook_id);
    res.status(204).end();
  });

  router.post<WebhookPath>("/webhooks/:webhook_id/rotate-secret", requireScope("hooks:manage"), async (req, res) => {
    const body: WebhookSubscriptionCreated = await rotateSecret(ctx, authOf(req).company.id, req.params.webhook_id);
    res.json(body);
  });

  router.get<WebhookPath>("/webhooks/:webhook_id/deliveries", requireScope("hooks:manage"), async (req, res) => {
    const query = parseInput(DeliveryListQuerySchema, req.query, "query string");
    const rows = await listDeliveries(ctx, authOf(req).company.id, req.params.webhook_id, query);
    const body: WebhookDelivery[] = pageWithLink(req, res, rows, query.limit).map(toDeliveryResponse);
    res.json(body);
  });

  router.post<DeliveryPath>("/webhooks/:webhook_id/deliveries/:delivery_id/redeliver", requireScope("hooks:manage"), async (req, res) => {
    const body: WebhookDelivery = await redeliver(ctx, authOf(req).company.id, req.params.webhook_id, req.params.delivery_id);
    res.status(202).json(body);
  });

  return router;
}

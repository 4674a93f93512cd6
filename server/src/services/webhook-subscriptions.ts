/**
 * REST-hook subscriptions (spec "REST hooks", "Events"; CONTRACT.md "Responses", "Scopes and limits", "Events and
 * deliveries"): subscribe, list, unsubscribe, rotate the signing secret, read the delivery log and redeliver.
 * Domain rules live here: known event names only, the target URL rules of the server's mode, the per-company limit,
 * the secret format and the 24-hour overlap of a rotated secret.
 */
import {
  EVENT_NAMES,
  MAX_SUBSCRIPTIONS_PER_COMPANY,
  decodeKeysetCursor,
  isEventName,
  type DeliveryState,
  type EventName,
  type PageQuery,
  type ProblemFieldError,
  type WebhookDelivery,
  type WebhookSubscribe,
  type WebhookSubscription,
  type WebhookSubscriptionCreated,
} from "@stageline/shared";
import type { AppContext } from "../context";
import * as log from "../db/webhook-deliveries-log";
import * as subscriptions from "../db/webhook-subscriptions";
import { domainError, notFound } from "./errors";
import { inIdempotentTransaction, type IdempotencyClaim } from "./idempotency";
import { generateWebhookSecret } from "../webhooks/secrets";
import { checkTargetUrl } from "../webhooks/target-url";

/** How long a rotated-out secret keeps signing deliveries beside the new one. */
export const PREVIOUS_SECRET_OVERLAP_MS = 24 * 60 * 60 * 1000;

/** The subscription object of the spec ("Webhook subscription (REST hook)"); never carries a secret. */
export function toSubscriptionResponse(row: subscriptions.SubscriptionRow): WebhookSubscription {
  return { id: row.id, target_url: row.targetUrl, event: row.event, created_at: row.createdAt.toISOString() };
}

/**
 * Subscribes `target_url` to one event (spec "REST hooks": POST /v1/ext/webhooks). The URL must satisfy
 * `checkTargetUrl` for the server's mode; the company may hold at most 1,000 subscriptions.
 * @returns the subscription plus its signing secret, which is shown only here (201 body).
 * @throws DomainError 422 `invalid_reference` for an unknown event name (with `valid_events`) and/or a target URL
 *   the mode does not allow (each listed in `errors`), or a company already at the subscription limit; with an
 *   idempotency `claim` (CONTRACT "Idempotency": the 201 response is stored in the same transaction),
 *   StoredResponseFound or 409 `idempotency_key_in_use` (nothing is written then).
 */
export async function subscribe(
  ctx: AppContext,
  companyId: string,
  input: WebhookSubscribe,
  claim?: IdempotencyClaim,
): Promise<WebhookSubscriptionCreated> {
  const errors: ProblemFieldError[] = [];
  const unknownEvent = !isEventName(input.event);
  if (unknownEvent) {
    errors.push({ path: "event", message: `Unknown event ${JSON.stringify(input.event)}. Valid events: ${EVENT_NAMES.join(", ")}.` });
  }
  const reason = checkTargetUrl(input.target_url, ctx.config.mode);
  if (reason) errors.push({ path: "target_url", message: reason });
  if (errors.length > 0) {
    const detail = errors.map((e) => e.message).join(" ");
    throw domainError("invalid_reference", detail, unknownEvent ? { errors, valid_events: [...EVENT_NAMES] } : { errors });
  }
  const secret = generateWebhookSecret();
  return inIdempotentTransaction(
    ctx.prisma,
    claim,
    async (tx) => {
      const result = await subscriptions.insertSubscriptionWithinLimit(
        tx,
        { companyId, targetUrl: input.target_url, event: input.event, secret },
        MAX_SUBSCRIPTIONS_PER_COMPANY,
      );
      if ("limitReached" in result) {
        throw domainError(
          "invalid_reference",
          `This company already has ${MAX_SUBSCRIPTIONS_PER_COMPANY.toLocaleString("en-US")} webhook subscriptions, the most allowed. ` +
            "Delete ones you no longer use (GET /v1/ext/webhooks lists them) and subscribe again.",
        );
      }
      const created: WebhookSubscriptionCreated = { ...toSubscriptionResponse(result), secret };
      return created;
    },
    (created) => ({ status: 201, body: JSON.stringify(created), location: null }),
  );
}

/**
 * One page of the company's subscriptions, newest first (CONTRACT.md "Lists").
 * @returns up to `query.limit + 1` rows: the extra row tells `pageWithLink` that a next page exists.
 * @throws DomainError 400 `validation_failed` for a cursor this API did not issue.
 */
export function listSubscriptions(ctx: AppContext, companyId: string, query: PageQuery): Promise<subscriptions.SubscriptionRow[]> {
  const after = query.cursor ? decodeKeysetCursor(query.cursor) : undefined;
  return subscriptions.listSubscriptions(ctx.prisma, companyId, after, query.limit + 1);
}

/**
 * Unsubscribes (spec "REST hooks": DELETE /v1/ext/webhooks/{webhook_id}; CONTRACT.md "Responses": 204). Its pending
 * deliveries are removed with it, so no further events are sent to its target URL.
 * @throws DomainError 404 `not_found` when the subscription is unknown, already deleted or another company's.
 */
export async function unsubscribe(ctx: AppContext, companyId: string, subscriptionId: string): Promise<void> {
  if (!(await subscriptions.deleteSubscription(ctx.prisma, companyId, subscriptionId))) {
    throw notFound("Webhook subscription", subscriptionId);
  }
}

/**
 * Issues a new signing secret (POST /v1/ext/webhooks/{webhook_id}/rotate-secret). The old secret stays valid for
 * 24 hours as `previous_secret`; meanwhile deliveries carry a signature for each, so receivers can switch over.
 * @returns the subscription plus the new secret, shown only here.
 * @throws DomainError 404 `not_found` when the subscription is unknown or another company's.
 */
export async function rotateSecret(ctx: AppContext, companyId: string, subscriptionId: string): Promise<WebhookSubscriptionCreated> {
  const secret = generateWebhookSecret();
  const expiresAt = new Date(Date.now() + PREVIOUS_SECRET_OVERLAP_MS);
  const row = await subscriptions.rotateSubscriptionSecret(ctx.prisma, companyId, subscriptionId, secret, expiresAt);
  if (!row) throw notFound("Webhook subscription", subscriptionId);
  return { ...toSubscriptionResponse(row), secret };
}

/**
 * One page of a subscription's delivery log, newest first (CONTRACT.md "Events and deliveries"), optionally only
 * deliveries in `state`.
 * @returns up to `query.limit + 1` rows: the extra row tells `pageWithLink` that a next page exists.
 * @throws DomainError 404 `not_found` (subscription unknown or another company's); 400 for a foreign cursor.
 */
export async function listDeliveries(
  ctx: AppContext,
  companyId: string,
  subscriptionId: string,
  query: PageQuery & { state?: DeliveryState | undefined },
): Promise<log.DeliveryLogRow[]> {
  const after = query.cursor ? decodeKeysetCursor(query.cursor) : undefined;
  await requireSubscription(ctx, companyId, subscriptionId);
  return log.listDeliveries(ctx.prisma, subscriptionId, { state: query.state, after }, query.limit + 1);
}

/**
 * Sends one delivery again (POST .../deliveries/{delivery_id}/redeliver): it goes back to `pending`, due now, with
 * its attempt history kept, and the dispatcher is woken.
 * @returns the delivery log entry after requeueing (202 body).
 * @throws DomainError 404 `not_found` when the subscription or the delivery (of that subscription) is unknown;
 *   422 `invalid_reference` when the dispatcher has disabled the subscription (nothing would be sent).
 */
export async function redeliver(ctx: AppContext, companyId: string, subscriptionId: string, deliveryId: string): Promise<WebhookDelivery> {
  const subscription = await requireSubscription(ctx, companyId, subscriptionId);
  if (subscription.disabledAt) {
    // The dispatcher sends nothing for a disabled subscription: a requeued delivery would wait forever.
    const why = subscription.disabledReason ? ` (${subscription.disabledReason})` : "";
    throw domainError(
      "invalid_reference",
      `Webhook subscription ${subscriptionId} was disabled at ${subscription.disabledAt.toISOString()}${why} and sends nothing more. ` +
        "Delete it and subscribe again once the target URL accepts deliveries.",
    );
  }
  if (!(await log.requeueDelivery(ctx.prisma, subscriptionId, deliveryId, new Date()))) {
    throw notFound("Webhook delivery", deliveryId);
  }
  // Read back before waking the dispatcher, so the response shows the requeued state rather than a race with the send.
  const row = await log.findDelivery(ctx.prisma, subscriptionId, deliveryId);
  ctx.eventsCommitted();
  if (!row) throw notFound("Webhook delivery", deliveryId); // deleted meanwhile together with its subscription
  return toDeliveryResponse(row);
}

/**
 * A delivery log entry (shared `WebhookDeliverySchema`): `next_attempt_at` only while pending, attempts newest first.
 */
export function toDeliveryResponse(row: log.DeliveryLogRow): WebhookDelivery {
  return {
    id: row.id,
    event_id: row.eventId,
    event: row.event.type as EventName,
    state: row.state as DeliveryState,
    attempt_count: row.attemptCount,
    next_attempt_at: row.state === "pending" ? row.nextAttemptAt.toISOString() : null,
    created_at: row.createdAt.toISOString(),
    completed_at: row.completedAt ? row.completedAt.toISOString() : null,
    last_status: row.lastStatus,
    attempts: row.attempts.map((a) => ({
      attempted_at: a.attemptedAt.toISOString(),
      response_status: a.responseStatus,
      duration_ms: a.durationMs,
      response_excerpt: a.responseExcerpt,
      error: a.error,
      next_attempt_at: a.nextAttemptAt ? a.nextAttemptAt.toISOString() : null,
    })),
  };
}

async function requireSubscription(ctx: AppContext, companyId: string, subscriptionId: string): Promise<subscriptions.SubscriptionStatusRow> {
  const subscription = await subscriptions.findSubscription(ctx.prisma, companyId, subscriptionId);
  if (!subscription) throw notFound("Webhook subscription", subscriptionId);
  return subscription;
}

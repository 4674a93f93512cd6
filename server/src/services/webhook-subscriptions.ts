/**
 * REST-hook subscriptions (spec "REST hooks", "Events"; CONTRACT.md "Responses", "Scopes and limits", "Events and
 * deliveries"): subscribe, list, unsubscribe, rotate the signing secret, read the delivery log and redeliver.
 * Domain rules live here: known event names only, the target URL rules of the server's mode, the per-company limit,
 * the secret format and the 24-hour overlap of a rotated secret.
 *
 * The API sees only the subscriptions made through it (origin `api`, one event each): outbound webhook endpoints
 * made in the console (services/webhook-endpoints.ts) share the table, limit and delivery engine but read as
 * unknown (404) here, so the REST-hook contract (one `event` per subscription) holds.
 */
import { eraseFinishedDeletedItemEvents } from "../db/event-erasure";
import {
  EVENT_NAMES,
  MAX_REPLAY_DELIVERIES,
  MAX_SUBSCRIPTIONS_PER_COMPANY,
  decodeKeysetCursor,
  isEventName,
  type DeliveryState,
  type EventName,
  type PageQuery,
  type ProblemFieldError,
  type WebhookDelivery,
  type WebhookReplay,
  type WebhookReplayResult,
  type WebhookSubscribe,
  type WebhookSubscription,
  type WebhookSubscriptionCreated,
} from "@stageline/shared";
import type { AppContext } from "../context";
import * as log from "../db/webhook-deliveries-log";
import * as subscriptions from "../db/webhook-subscriptions";
import { domainError, notFound, type DomainError } from "./errors";
import { inIdempotentTransaction, type IdempotencyClaim } from "./idempotency";
import { generateWebhookSecret } from "../webhooks/secrets";
import { checkTargetUrl } from "../webhooks/target-url";
import { checkSubscriptionFilter, toFilterResponse } from "./subscription-filter";

/** How long a rotated-out secret keeps signing deliveries beside the new one. */
export const PREVIOUS_SECRET_OVERLAP_MS = 24 * 60 * 60 * 1000;

/**
 * The subscription object of the spec ("Webhook subscription (REST hook)") with the contract's `disabled_at` and
 * `disabled_reason` (null while active) and endpoint health (`failing_since`, `next_attempt_at`: see
 * `endpointHealthOf`); never carries a secret.
 */
export function toSubscriptionResponse(row: subscriptions.SubscriptionRow): WebhookSubscription {
  const health = endpointHealthOf(row);
  return {
    id: row.id,
    target_url: row.targetUrl,
    event: row.events[0] ?? "",
    created_at: row.createdAt.toISOString(),
    disabled_at: row.disabledAt?.toISOString() ?? null,
    disabled_reason: row.disabledAt ? row.disabledReason : null,
    failing_since: health.failingSince?.toISOString() ?? null,
    next_attempt_at: health.nextAttemptAt?.toISOString() ?? null,
    filter: toFilterResponse(row),
  };
}

/**
 * Endpoint health as the contract shows it (CONTRACT "Events and deliveries"; the API's `failing_since` and
 * `next_attempt_at`, the console's endpoint page): `failingSince` while the last attempt failed, and
 * `nextAttemptAt`, when the failing endpoint is tried next: the time its queue is due (the head's retry); both null
 * when it is not failing or is disabled, and `nextAttemptAt` null while paused (nothing is tried then).
 */
export function endpointHealthOf(row: Pick<subscriptions.SubscriptionRow, "failingSince" | "nextDueAt" | "disabledAt" | "pausedAt">): {
  failingSince: Date | null;
  nextAttemptAt: Date | null;
} {
  const failingSince = row.disabledAt === null ? row.failingSince : null;
  return { failingSince, nextAttemptAt: failingSince && row.pausedAt === null ? row.nextDueAt : null };
}

/** The API's view of a company's subscriptions: REST hooks only. */
function restHooksOf(companyId: string): subscriptions.SubscriptionScope {
  return { companyId, origin: "api" };
}

/**
 * Subscribes `target_url` to one event (spec "REST hooks": POST /v1/ext/webhooks). The URL must satisfy
 * `checkTargetUrl` for the server's mode; the company may hold at most 1,000 subscriptions. An optional `filter`
 * (CONTRACT "Subscription filters") is checked against the company's pipelines (services/subscription-filter.ts) and
 * stored with it; the fan-out then queues only the events it passes.
 * @returns the subscription plus its signing secret, which is shown only here (201 body).
 * @throws DomainError 422 `invalid_reference` for an unknown event name (with `valid_events`) and/or a target URL
 *   the mode does not allow (each listed in `errors`), a filter whose pipeline, stage or field names do not resolve
 *   for the company, or a company already at the subscription limit; with an
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
  const filter = await checkSubscriptionFilter(ctx.prisma, companyId, input.event, input.filter);
  const secret = generateWebhookSecret();
  return inIdempotentTransaction(
    ctx.prisma,
    claim,
    async (tx) => {
      const result = await subscriptions.insertSubscriptionWithinLimit(
        tx,
        { companyId, targetUrl: input.target_url, events: [input.event], origin: "api", secret, ...filter },
        MAX_SUBSCRIPTIONS_PER_COMPANY,
      );
      if ("limitReached" in result) throw subscriptionLimitReached("GET /v1/ext/webhooks lists them");
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
  return subscriptions.listSubscriptions(ctx.prisma, restHooksOf(companyId), after, query.limit + 1);
}

/**
 * Unsubscribes (spec "REST hooks": DELETE /v1/ext/webhooks/{webhook_id}; CONTRACT.md "Responses": 204). Its pending
 * deliveries are removed with it, so no further events are sent to its target URL.
 * @throws DomainError 404 `not_found` when the subscription is unknown, already deleted or another company's.
 */
export async function unsubscribe(ctx: AppContext, companyId: string, subscriptionId: string): Promise<void> {
  if (!(await subscriptions.deleteSubscription(ctx.prisma, restHooksOf(companyId), subscriptionId))) {
    throw notFound("Webhook subscription", subscriptionId);
  }
  await eraseFinishedDeletedItemEvents(ctx.prisma, companyId); // CONTRACT "Item deletion and erasure": its deliveries went with it
}

/**
 * Issues a new signing secret (POST /v1/ext/webhooks/{webhook_id}/rotate-secret). The old secret stays valid for
 * 24 hours as `previous_secret`; meanwhile deliveries carry a signature for each, so receivers can switch over.
 * @returns the subscription plus the new secret, shown only here.
 * @throws DomainError 404 `not_found` when the subscription is unknown or another company's.
 */
export async function rotateSecret(ctx: AppContext, companyId: string, subscriptionId: string): Promise<WebhookSubscriptionCreated> {
  const { row, secret } = await rotateSubscriptionSecret(ctx, restHooksOf(companyId), subscriptionId);
  return { ...toSubscriptionResponse(row), secret };
}

/**
 * Rotates the signing secret of the subscription `subscriptionId` within `scope` (the API's and the console's
 * rotation): a new secret now, the old one kept as `previous_secret` for {@link PREVIOUS_SECRET_OVERLAP_MS}.
 * @returns the subscription and its new secret.
 * @throws DomainError 404 `not_found` when the subscription is unknown or out of scope.
 */
export async function rotateSubscriptionSecret(
  ctx: AppContext,
  scope: subscriptions.SubscriptionScope,
  subscriptionId: string,
): Promise<{ row: subscriptions.SubscriptionRow; secret: string }> {
  const secret = generateWebhookSecret();
  const expiresAt = new Date(Date.now() + PREVIOUS_SECRET_OVERLAP_MS);
  const row = await subscriptions.rotateSubscriptionSecret(ctx.prisma, scope, subscriptionId, secret, expiresAt);
  if (!row) throw notFound("Webhook subscription", subscriptionId);
  return { row, secret };
}

/**
 * The 422 of a subscribe or endpoint creation when the company already holds the most subscriptions allowed
 * (REST hooks and console endpoints together, disabled ones not counted).
 * @param whereListed where the caller can see and delete them, e.g. "GET /v1/ext/webhooks lists them".
 */
export function subscriptionLimitReached(whereListed: string): DomainError {
  return domainError(
    "invalid_reference",
    `This company already has ${MAX_SUBSCRIPTIONS_PER_COMPANY.toLocaleString("en-US")} webhook subscriptions that are not disabled, the most allowed. ` +
      `Delete ones you no longer use (${whereListed}) and subscribe again.`,
  );
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
  await requireSubscription(ctx, restHooksOf(companyId), subscriptionId);
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
  await requeueDelivery(ctx, restHooksOf(companyId), subscriptionId, deliveryId);
  const row = await log.findDelivery(ctx.prisma, subscriptionId, deliveryId);
  if (!row) throw notFound("Webhook delivery", deliveryId); // deleted meanwhile together with its subscription
  return toDeliveryResponse(row);
}

/**
 * Puts delivery `deliveryId` of the subscription `subscriptionId` within `scope` back in the queue, due now, its
 * attempt history kept, and wakes the dispatcher (the API's redeliver and the console's "Resend"). A paused
 * subscription keeps it queued until it is resumed.
 * @throws DomainError 404 `not_found` when the subscription (within `scope`) or the delivery (of that subscription)
 *   is unknown; 422 `invalid_reference` when the dispatcher has disabled the subscription (nothing would be sent).
 */
export async function requeueDelivery(
  ctx: AppContext,
  scope: subscriptions.SubscriptionScope,
  subscriptionId: string,
  deliveryId: string,
): Promise<void> {
  await requireSendingSubscription(ctx, scope, subscriptionId);
  const requeued = await log.requeueDelivery(ctx.prisma, subscriptionId, deliveryId, new Date());
  if (requeued === "missing") throw notFound("Webhook delivery", deliveryId);
  if (requeued === "erased") {
    throw domainError(
      "payload_erased",
      `Webhook delivery ${deliveryId} cannot be sent again: its item or note was deleted and the body was erased with it (CONTRACT "Item deletion and erasure", "Notes").`,
    );
  }
  ctx.eventsCommitted();
}

/**
 * The subscription `subscriptionId` within `scope`, which the dispatcher still sends for (a delivery queued again
 * would go out).
 * @throws DomainError 404 `not_found` when unknown or out of scope; 422 `invalid_reference` when the dispatcher has
 *   disabled it (a requeued delivery would wait forever).
 */
async function requireSendingSubscription(
  ctx: AppContext,
  scope: subscriptions.SubscriptionScope,
  subscriptionId: string,
): Promise<subscriptions.SubscriptionRow> {
  const subscription = await requireSubscription(ctx, scope, subscriptionId);
  if (subscription.disabledAt) {
    const why = subscription.disabledReason ? ` (${subscription.disabledReason})` : "";
    throw domainError(
      "invalid_reference",
      `Webhook subscription ${subscriptionId} was disabled at ${subscription.disabledAt.toISOString()}${why} and sends nothing more. ` +
        "Delete it and subscribe again once the target URL accepts deliveries.",
    );
  }
  return subscription;
}

/**
 * Replays a range of a REST hook's deliveries (POST /v1/ext/webhooks/{webhook_id}/replay, CONTRACT "Events feed";
 * Standard Webhooks' "replay failures of a range"): the subscription's deliveries of events that occurred in
 * [`since`, `until` or now), failed ones only unless `only_failed` is false (then delivered ones too), go back in
 * the queue as a redeliver puts one, the oldest first and at most MAX_REPLAY_DELIVERIES per call (call again for
 * the rest: the replayed ones are pending and not picked twice). Deliveries whose body was erased (their item was
 * deleted) are not replayed: nothing is left to send. They go out through the normal dispatcher (event order per
 * subscription, fair share between endpoints), each with its event's `webhook-id`.
 * @returns `{ count }`, the deliveries queued again (the 202 body).
 * @throws DomainError 404 `not_found` for an unknown subscription or another company's; 422 `invalid_reference`
 *   when the dispatcher has disabled it.
 */
export function replayDeliveries(ctx: AppContext, companyId: string, subscriptionId: string, input: WebhookReplay): Promise<WebhookReplayResult> {
  return replayRange(ctx, restHooksOf(companyId), subscriptionId, input);
}

/**
 * The replay of {@link replayDeliveries} for the subscription `subscriptionId` within `scope` (the API: the company's
 * REST hooks; the console's "Replay failed deliveries since...": its endpoints and REST hooks alike).
 * @returns `{ count }`, the deliveries queued again (at most MAX_REPLAY_DELIVERIES).
 * @throws DomainError 404 `not_found` when unknown or out of scope; 422 `invalid_reference` when disabled.
 */
export async function replayRange(
  ctx: AppContext,
  scope: subscriptions.SubscriptionScope,
  subscriptionId: string,
  input: WebhookReplay,
): Promise<WebhookReplayResult> {
  await requireSendingSubscription(ctx, scope, subscriptionId);
  const now = new Date();
  const count = await log.requeueRange(
    ctx.prisma,
    subscriptionId,
    {
      since: new Date(input.since),
      until: input.until !== undefined ? new Date(input.until) : now,
      states: input.only_failed ? ["failed"] : ["failed", "succeeded"],
      cap: MAX_REPLAY_DELIVERIES,
    },
    now,
  );
  if (count > 0) ctx.eventsCommitted();
  return { count };
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

/**
 * The subscription `subscriptionId` within `scope`.
 * @throws DomainError 404 `not_found` when unknown or out of scope (another company's; a console endpoint for the API).
 */
export async function requireSubscription(
  ctx: AppContext,
  scope: subscriptions.SubscriptionScope,
  subscriptionId: string,
): Promise<subscriptions.SubscriptionRow> {
  const subscription = await subscriptions.findSubscription(ctx.prisma, scope, subscriptionId);
  if (!subscription) throw notFound("Webhook subscription", subscriptionId);
  return subscription;
}

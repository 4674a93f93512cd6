/**
 * Outbound webhook endpoints (issue 10, "Outbound webhooks page"): webhook subscriptions made in the console, with
 * a description, one or more events of the catalogue and a pause switch. They are rows of the same table as REST
 * hooks and go through the same outbox, dispatcher, retries and Standard Webhooks signing, with the same item and
 * task bodies (CONTRACT.md "Events and deliveries"). The console also lists the company's REST hooks made through
 * the API (origin `api`, e.g. by Zapier), which it may delete and whose deliveries it shows and resends, but not
 * edit, pause, test or reveal: their secret belongs to the API client that subscribed.
 *
 * Paused endpoints: while paused, new events queue nothing for the endpoint (they are not delivered later either),
 * and the deliveries already queued wait, retries included; on resume they are sent, still in event order. A
 * delivery whose 3-day retry window passes during the pause ends as failed at its next attempt (retry-policy.ts).
 *
 * Every function is scoped to the caller's company: another company's endpoint or delivery is 404 `not_found`.
 */
import { eraseFinishedDeletedItemEvents } from "../db/event-erasure";
import { z } from "zod";
import {
  EVENT_NAMES,
  EVENT_RESOURCES,
  decodeKeysetCursor,
  MAX_SUBSCRIPTIONS_PER_COMPANY,
  isEventName,
  type EventName,
  type ProblemFieldError,
  type WebhookReplay,
} from "@stageline/shared";
import type { AppContext } from "../context";
import type { Prisma } from "../generated/prisma/client";
import { insertEventForSubscription } from "../db/outbox";
import * as log from "../db/webhook-deliveries-log";
import * as subscriptions from "../db/webhook-subscriptions";
import { generateWebhookSecret } from "../webhooks/secrets";
import { checkTargetUrl } from "../webhooks/target-url";
import { recordAudit, type AuditActor } from "./audit-log";
import { domainError, notFound } from "./errors";
import { toPage, type Page } from "./keyset-page";
import { sampleEventPayload } from "./sample-events";
import { SAMPLE_IDS, sampleItem, sampleTask } from "./samples";
import { roleAtLeast, type Role } from "./users";
import { endpointHealthOf } from "./webhook-subscriptions";
import {
  PREVIOUS_SECRET_OVERLAP_MS,
  replayRange,
  requeueDelivery,
  requireSubscription,
  rotateSubscriptionSecret,
  subscriptionLimitReached,
} from "./webhook-subscriptions";

export type { SubscriptionRow as EndpointRow } from "../db/webhook-subscriptions";

/** Longest endpoint description, in characters. */
export const DESCRIPTION_MAX = 500;

/** Endpoints per page of the console's list. */
export const ENDPOINT_PAGE_SIZE = 50;

/** Deliveries per page of the console's delivery log. */
export const DELIVERY_PAGE_SIZE = 50;

/** The delivery-log filter by outcome, in the console's words, and the delivery state each means. */
export const DELIVERY_OUTCOMES = { delivered: "succeeded", failed: "failed", pending: "pending" } as const;
/** One outcome of {@link DELIVERY_OUTCOMES}. */
export type DeliveryOutcome = keyof typeof DELIVERY_OUTCOMES;

/**
 * Who changes an endpoint, for tenant scoping and the audit log (services/audit-log.ts): the company acted in, the
 * actor (a console user) and the client IP.
 */
export interface EndpointManager {
  companyId: string;
  actor: AuditActor;
  ip?: string | null;
}

/** Records an endpoint change in the audit log (never a secret). */
function audit(
  ctx: AppContext,
  by: EndpointManager,
  action:
    | "webhook_endpoint.created"
    | "webhook_endpoint.changed"
    | "webhook_endpoint.deleted"
    | "webhook_endpoint.secret_rotated"
    | "webhook_endpoint.deliveries_replayed",
  row: subscriptions.SubscriptionRow,
  details: Record<string, Prisma.InputJsonValue | null> = {},
): Promise<void> {
  return recordAudit(ctx.prisma, {
    companyId: by.companyId,
    actor: by.actor,
    action,
    target: { type: "webhook_endpoint", id: row.id, label: row.targetUrl },
    ip: by.ip ?? null,
    details,
  });
}

/** What the audit log keeps of an endpoint's settings. */
function settingsOf(row: subscriptions.SubscriptionRow): Record<string, Prisma.InputJsonValue | null> {
  return { target_url: row.targetUrl, description: row.description, events: row.events, origin: row.origin };
}

/**
 * The endpoint form (create and edit): `target_url`, an optional `description`, and `events` as one or more event
 * names (a form posts one value per ticked checkbox; a single box arrives as a string). Whether the URL and the
 * names are acceptable is decided by {@link createEndpoint} / {@link updateEndpoint}, which report every failing
 * field at once.
 */
export const EndpointInputSchema = z.object({
  target_url: z.string({ error: "Enter the endpoint URL." }).trim().min(1, "Enter the endpoint URL.").max(2048, "The URL is longer than 2,048 characters."),
  description: z
    .string()
    .trim()
    .max(DESCRIPTION_MAX, `The description is longer than ${DESCRIPTION_MAX} characters.`)
    .optional()
    .transform((v) => (v ? v : null)),
  events: z.preprocess(
    (v) => (v === undefined ? [] : Array.isArray(v) ? v : [v]),
    z.array(z.string()).min(1, "Choose at least one event."),
  ),
});
/** A parsed endpoint form. */
export type EndpointInput = z.infer<typeof EndpointInputSchema>;

/** The console's view of a company's subscriptions: REST hooks and endpoints alike. */
function companyScope(companyId: string): subscriptions.SubscriptionScope {
  return { companyId };
}

/**
 * The events of `input` in catalogue order, after checking the URL (the REST-hook target URL rules of the
 * server's mode, webhooks/target-url.ts) and that every event name is in the catalogue.
 * @throws DomainError 422 `invalid_reference` listing each failing field (`target_url`, `events`).
 */
function checkEndpointInput(ctx: AppContext, input: EndpointInput): EventName[] {
  const errors: ProblemFieldError[] = [];
  const reason = checkTargetUrl(input.target_url, ctx.config.mode);
  if (reason) errors.push({ path: "target_url", message: reason });
  const unknown = input.events.filter((e) => !isEventName(e));
  if (unknown.length > 0) {
    errors.push({ path: "events", message: `Unknown event ${unknown.map((e) => JSON.stringify(e)).join(", ")}. Valid events: ${EVENT_NAMES.join(", ")}.` });
  }
  if (errors.length > 0) throw domainError("invalid_reference", errors.map((e) => e.message).join(" "), { errors });
  return EVENT_NAMES.filter((e) => input.events.includes(e));
}

/**
 * Creates a console endpoint (origin `console`, not paused) with a new signing secret, which is not returned: the
 * console reveals it on demand ({@link revealSecret}). The company may hold at most 1,000 subscriptions in all.
 * @returns the new endpoint.
 * @throws DomainError 422 `invalid_reference` for a URL the server's mode does not allow, an unknown event name,
 *   or a company at the subscription limit.
 */
export async function createEndpoint(ctx: AppContext, by: EndpointManager, input: EndpointInput): Promise<subscriptions.SubscriptionRow> {
  const events = checkEndpointInput(ctx, input);
  const result = await ctx.prisma.$transaction((tx) =>
    subscriptions.insertSubscriptionWithinLimit(
      tx,
      { companyId: by.companyId, targetUrl: input.target_url, description: input.description, events, origin: "console", secret: generateWebhookSecret() },
      MAX_SUBSCRIPTIONS_PER_COMPANY,
    ),
  );
  if ("limitReached" in result) throw subscriptionLimitReached("the console's Webhooks page lists them");
  await audit(ctx, by, "webhook_endpoint.created", result, settingsOf(result));
  return result;
}

/**
 * One page of the company's subscriptions for the console, newest first: console endpoints and REST hooks (origin
 * `api`) together, {@link ENDPOINT_PAGE_SIZE} a page (keyset pagination).
 * @throws DomainError 400 `validation_failed` for a cursor the console did not issue.
 */
export async function listEndpoints(ctx: AppContext, companyId: string, cursor?: string): Promise<Page<subscriptions.SubscriptionRow>> {
  const after = cursor ? decodeKeysetCursor(cursor) : undefined;
  const rows = await subscriptions.listSubscriptions(ctx.prisma, companyScope(companyId), after, ENDPOINT_PAGE_SIZE + 1);
  return toPage(rows, ENDPOINT_PAGE_SIZE);
}

/**
 * The company's endpoint or REST hook `id`.
 * @throws DomainError 404 `not_found` when unknown or another company's.
 */
export function getEndpoint(ctx: AppContext, companyId: string, id: string): Promise<subscriptions.SubscriptionRow> {
  return requireSubscription(ctx, companyScope(companyId), id);
}

/**
 * The company's console endpoint `id`, for a change only console endpoints allow.
 * @throws DomainError 404 `not_found` when unknown or another company's; 422 `invalid_reference` for a REST hook
 *   made through the API (`what` names the refused change).
 */
async function requireConsoleEndpoint(ctx: AppContext, companyId: string, id: string, what: string): Promise<subscriptions.SubscriptionRow> {
  const row = await getEndpoint(ctx, companyId, id);
  if (row.origin !== "console") {
    throw domainError(
      "invalid_reference",
      `Webhook ${id} is a REST hook subscribed through the API (for example by Zapier): it cannot be ${what} here. ` +
        "Delete it here, or change it from the application that subscribed it.",
    );
  }
  return row;
}

/**
 * Changes a console endpoint's URL, description and events (same rules as {@link createEndpoint}).
 * @returns the endpoint before and after the change (for the audit log).
 * @throws DomainError 404 `not_found` (unknown or another company's); 422 `invalid_reference` for bad input or
 *   a REST hook.
 */
export async function updateEndpoint(
  ctx: AppContext,
  by: EndpointManager,
  id: string,
  input: EndpointInput,
): Promise<{ before: subscriptions.SubscriptionRow; after: subscriptions.SubscriptionRow }> {
  const events = checkEndpointInput(ctx, input);
  const before = await requireConsoleEndpoint(ctx, by.companyId, id, "edited");
  const after = await subscriptions.updateSubscription(ctx.prisma, { companyId: by.companyId, origin: "console" }, id, {
    targetUrl: input.target_url,
    description: input.description,
    events,
  });
  if (!after) throw notFound("Webhook endpoint", id);
  await audit(ctx, by, "webhook_endpoint.changed", after, { from: settingsOf(before), to: settingsOf(after) });
  return { before, after };
}

/**
 * Pauses (`paused` true) or resumes a console endpoint. Paused: no new deliveries are queued for it and its queued
 * ones wait; resumed: they are sent in order, and the dispatcher is woken.
 * @returns the endpoint after the change.
 * @throws DomainError 404 `not_found` (unknown or another company's); 422 `invalid_reference` for a REST hook.
 */
export async function setEndpointPaused(ctx: AppContext, by: EndpointManager, id: string, paused: boolean): Promise<subscriptions.SubscriptionRow> {
  const before = await requireConsoleEndpoint(ctx, by.companyId, id, paused ? "paused" : "resumed");
  const row = await subscriptions.setSubscriptionPaused(ctx.prisma, { companyId: by.companyId, origin: "console" }, id, paused ? new Date() : null);
  if (!row) throw notFound("Webhook endpoint", id);
  if (!paused) ctx.eventsCommitted();
  if ((before.pausedAt === null) === paused) await audit(ctx, by, "webhook_endpoint.changed", row, { paused });
  return row;
}

/**
 * Deletes an endpoint or a REST hook of the company; its queued deliveries and its delivery log go with it.
 * @returns the deleted row (for the audit log).
 * @throws DomainError 404 `not_found` when unknown or another company's.
 */
export async function deleteEndpoint(ctx: AppContext, by: EndpointManager, id: string): Promise<subscriptions.SubscriptionRow> {
  const row = await getEndpoint(ctx, by.companyId, id);
  if (!(await subscriptions.deleteSubscription(ctx.prisma, companyScope(by.companyId), id))) throw notFound("Webhook endpoint", id);
  await eraseFinishedDeletedItemEvents(ctx.prisma, by.companyId); // CONTRACT "Item deletion and erasure": its deliveries went with it
  await audit(ctx, by, "webhook_endpoint.deleted", row, settingsOf(row));
  return row;
}

/** What "Reveal" shows: the current secret and, during a rotation overlap, the previous one and until when. */
export interface RevealedSecret {
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
}

/**
 * The signing secrets of a console endpoint, for an owner or admin only (a member never sees a secret). The
 * previous secret is included only while it still signs deliveries.
 * @throws DomainError 403 `insufficient_scope` for a member; 404 `not_found` (unknown or another company's);
 *   422 `invalid_reference` for a REST hook (its secret went to the API client that subscribed).
 */
export async function revealSecret(ctx: AppContext, companyId: string, role: Role, id: string): Promise<RevealedSecret> {
  if (!roleAtLeast(role, "admin")) {
    throw domainError("insufficient_scope", "Only an owner or admin can reveal a signing secret.");
  }
  await requireConsoleEndpoint(ctx, companyId, id, "revealed");
  const secrets = await subscriptions.findSubscriptionSecrets(ctx.prisma, { companyId, origin: "console" }, id);
  if (!secrets) throw notFound("Webhook endpoint", id);
  const overlapping = secrets.previousSecretExpiresAt !== null && secrets.previousSecretExpiresAt.getTime() > Date.now();
  return {
    secret: secrets.secret,
    previousSecret: overlapping ? secrets.previousSecret : null,
    previousSecretExpiresAt: overlapping ? secrets.previousSecretExpiresAt : null,
  };
}

/**
 * Rotates a console endpoint's signing secret: deliveries are signed with the new one at once and with the old one
 * too for {@link PREVIOUS_SECRET_OVERLAP_MS} (24 hours), so the receiver can switch over. The new secret is not
 * returned: "Reveal" shows it.
 * @returns the endpoint.
 * @throws DomainError 404 `not_found` (unknown or another company's); 422 `invalid_reference` for a REST hook.
 */
export async function rotateEndpointSecret(ctx: AppContext, by: EndpointManager, id: string): Promise<subscriptions.SubscriptionRow> {
  await requireConsoleEndpoint(ctx, by.companyId, id, "given a new secret");
  const { row } = await rotateSubscriptionSecret(ctx, { companyId: by.companyId, origin: "console" }, id);
  await audit(ctx, by, "webhook_endpoint.secret_rotated", row, { previous_secret_valid_hours: PREVIOUS_SECRET_OVERLAP_MS / 3_600_000 });
  return row;
}

/** Stands in for the API key id in a sample task's `created_by` (a test event has no key behind it). */
export const SAMPLE_CREATED_BY = "sample_api_key";

/**
 * The body of a test event `event`: a sample built from the company's blueprint (services/samples.ts), in the exact
 * format of that event's real deliveries: the item for `item.created`, the item with `changed_fields` and
 * `previous` for item updates, the task for `task.created`, the task with `changed_fields` and `previous` for task
 * updates (CONTRACT "Previous values in update events"), the note event bodies of the notes sample for note events.
 */
export async function testEventPayload(ctx: AppContext, companyId: string, event: EventName): Promise<Record<string, unknown>> {
  if (EVENT_RESOURCES[event] === "notes") return (await sampleEventPayload(ctx, companyId, SAMPLE_CREATED_BY, "notes", event)) as Record<string, unknown>;
  if (EVENT_RESOURCES[event] === "tasks") {
    const task = sampleTask(SAMPLE_CREATED_BY);
    if (event === "task.created") return task;
    if (event === "task.completed") {
      const completed = { ...task, is_completed: true, completed_at: task.updated_at };
      return { ...completed, changed_fields: ["is_completed", "completed_at"], previous: { is_completed: false, completed_at: null } };
    }
    return { ...task, changed_fields: ["title"], previous: { title: `${task.title} (before)` } };
  }
  const item = await sampleItem(ctx, companyId);
  if (event === "item.created") return item;
  const changed = event === "item.stage_changed" ? ["stage", "status"] : ["name"];
  const previous = event === "item.stage_changed" ? { stage: item.stage, status: item.status } : { stage: item.stage, status: item.status, name: `${item.name} (before)` };
  return { ...item, changed_fields: changed, previous };
}

/**
 * "Send test event": stores a sample event `event` (default: the endpoint's first) in the outbox and queues its
 * delivery to this endpoint only; the dispatcher signs and sends it like any other, retries included, and it
 * appears in the delivery log. The event's resource id is the sample's (e.g. `sample_item`).
 * @returns the outbox event id (the delivery's `webhook-id`).
 * @throws DomainError 404 `not_found` (unknown or another company's); 422 `invalid_reference` for a REST hook, an
 *   event the endpoint does not subscribe to, or a paused or disabled endpoint (nothing would be sent).
 */
export async function sendTestEvent(ctx: AppContext, companyId: string, id: string, event?: string): Promise<string> {
  const endpoint = await requireConsoleEndpoint(ctx, companyId, id, "sent a test event");
  const type = event ?? endpoint.events[0];
  if (!type || !isEventName(type) || !endpoint.events.includes(type)) {
    throw domainError("invalid_reference", `This endpoint does not subscribe to ${JSON.stringify(type)}. Its events: ${endpoint.events.join(", ")}.`, {
      errors: [{ path: "event", message: `Choose one of: ${endpoint.events.join(", ")}.` }],
    });
  }
  if (endpoint.pausedAt || endpoint.disabledAt) {
    const state = endpoint.pausedAt ? "paused: resume it" : "disabled after failing for days: delete it and add it again";
    throw domainError("invalid_reference", `Webhook endpoint ${id} is ${state} before sending a test event.`);
  }
  const payload = await testEventPayload(ctx, companyId, type);
  const resourceId = { items: SAMPLE_IDS.item, tasks: SAMPLE_IDS.task, notes: SAMPLE_IDS.note }[EVENT_RESOURCES[type]];
  const eventId = await ctx.prisma.$transaction((tx) =>
    insertEventForSubscription(tx, { companyId, type, resourceId, payload: payload as Prisma.InputJsonValue }, id),
  );
  if (!eventId) throw notFound("Webhook endpoint", id); // deleted, paused or disabled meanwhile
  ctx.eventsCommitted();
  return eventId;
}

/**
 * One page of an endpoint's (or REST hook's) delivery log, newest first, {@link DELIVERY_PAGE_SIZE} a page,
 * optionally only deliveries with `outcome` (delivered, failed, pending), with the endpoint itself.
 * @throws DomainError 404 `not_found` (endpoint unknown or another company's); 400 `validation_failed` for a
 *   cursor the console did not issue.
 */
export async function listEndpointDeliveries(
  ctx: AppContext,
  companyId: string,
  id: string,
  options: { outcome?: DeliveryOutcome | undefined; cursor?: string | undefined } = {},
): Promise<Page<log.DeliverySummaryRow> & { endpoint: subscriptions.SubscriptionRow; health: EndpointHealthView }> {
  const after = options.cursor ? decodeKeysetCursor(options.cursor) : undefined;
  const endpoint = await getEndpoint(ctx, companyId, id);
  const state = options.outcome ? DELIVERY_OUTCOMES[options.outcome] : undefined;
  const rows = await log.listDeliverySummaries(ctx.prisma, id, { state, after }, DELIVERY_PAGE_SIZE + 1);
  const waiting = await log.countPendingDeliveries(ctx.prisma, id, WAITING_COUNT_CAP + 1);
  return {
    endpoint,
    health: {
      ...endpointHealthOf(endpoint),
      waiting: Math.min(waiting, WAITING_COUNT_CAP),
      waitingCapped: waiting > WAITING_COUNT_CAP,
    },
    ...toPage(rows, DELIVERY_PAGE_SIZE),
  };
}

/** Pending deliveries an endpoint page counts at most ("10,000+ waiting"). */
export const WAITING_COUNT_CAP = 10_000;

/** An endpoint's health as its console page states it (CONTRACT "Events and deliveries": endpoint health). */
export interface EndpointHealthView {
  /** Start of the current run of failed attempts, or null. */
  failingSince: Date | null;
  /** When a failing endpoint is tried next, or null. */
  nextAttemptAt: Date | null;
  /** Deliveries waiting (pending), at most {@link WAITING_COUNT_CAP}. */
  waiting: number;
  /** More than {@link WAITING_COUNT_CAP} are waiting. */
  waitingCapped: boolean;
}

/**
 * One delivery of an endpoint in detail, with the endpoint: the event and the exact body sent, and its newest attempts (up to
 * `log.DETAIL_ATTEMPTS`) with the request headers sent, the response status, duration and the response body's
 * first 1 KB.
 * @throws DomainError 404 `not_found` when the endpoint (another company's) or the delivery (of that endpoint) is unknown.
 */
export async function getEndpointDelivery(
  ctx: AppContext,
  companyId: string,
  id: string,
  deliveryId: string,
): Promise<{ endpoint: subscriptions.SubscriptionRow; delivery: log.DeliveryDetailRow }> {
  const endpoint = await getEndpoint(ctx, companyId, id);
  const delivery = await log.findDeliveryDetail(ctx.prisma, id, deliveryId);
  if (!delivery) throw notFound("Webhook delivery", deliveryId);
  return { endpoint, delivery };
}

/**
 * "Resend": puts a delivery back in the queue, due now, its attempts kept (the API's redeliver).
 * @throws DomainError 404 `not_found` (endpoint or delivery unknown); 422 `invalid_reference` when the endpoint was disabled.
 */
export function resendDelivery(ctx: AppContext, companyId: string, id: string, deliveryId: string): Promise<void> {
  return requeueDelivery(ctx, companyScope(companyId), id, deliveryId);
}

/**
 * "Replay failed deliveries since..." (CONTRACT "Events feed": the replay of `POST /v1/ext/webhooks/{id}/replay`, the
 * same service, `replayRange`): queues again the deliveries of an endpoint or REST hook of the company whose events
 * occurred in [`since`, `until` or now), failed ones only unless `only_failed` is false, the oldest first and at most
 * MAX_REPLAY_DELIVERIES; each goes out with its event's `webhook-id`. Recorded in the audit log with the range and
 * the count (also when nothing matched: someone asked).
 * @returns how many deliveries were queued again.
 * @throws DomainError 404 `not_found` (unknown or another company's); 422 `invalid_reference` when the dispatcher has
 *   disabled it (nothing would be sent).
 */
export async function replayEndpointDeliveries(ctx: AppContext, by: EndpointManager, id: string, input: WebhookReplay): Promise<number> {
  const row = await getEndpoint(ctx, by.companyId, id);
  const { count } = await replayRange(ctx, companyScope(by.companyId), id, input);
  await audit(ctx, by, "webhook_endpoint.deliveries_replayed", row, {
    since: input.since,
    until: input.until ?? null,
    only_failed: input.only_failed,
    count,
  });
  return count;
}

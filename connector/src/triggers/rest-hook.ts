/**
 * The REST-hook plumbing every instant trigger shares (spec "REST hooks" and "Events"; CONTRACT "Events and
 * deliveries"): subscribe the Zap's URL to one event, unsubscribe it, turn a delivery into Zap runs, and load
 * samples for the Zap editor. Each trigger only says how a payload becomes its output (`toOutput`, which sets the
 * `id` Zapier de-duplicates on); its optional Pipeline / Stage / "Only when these fields change" inputs become the
 * subscription's server-side filter (hook-filter.ts, CONTRACT "Subscription filters").
 *
 * Flow: turning a Zap on calls `performSubscribe` (POST /v1/ext/webhooks `{target_url, event}`); Zapier keeps the
 * 201 subscription as `bundle.subscribeData`. Each delivery's body (the resource, CONTRACT "Events and deliveries")
 * arrives in `perform` as `bundle.rawRequest` (headers and exact body, whose signature is checked). Turning the Zap off calls `performUnsubscribe`
 * (DELETE /v1/ext/webhooks/{subscribeData.id}).
 * "Test trigger" in the Zap editor calls `performList`: the event's recent events from the events feed (CONTRACT
 * "Events feed"), each event's `data` being exactly the body a delivery carries, so the user sees their own data in
 * the very shape (and with the very `id`) the hook will deliver.
 */
import type { Bundle, HttpResponse, ZObject } from 'zapier-platform-core';
import {
  EVENT_RESOURCES,
  IDEMPOTENCY_KEY_HEADER,
  WebhookSubscribeSchema,
  type EventName,
  type EventPayload,
  type FeedEvent,
  type Item,
  type Note,
  type SampleResource,
  type Task,
  type WebhookFilter,
  type WebhookSubscribe,
  type WebhookSubscriptionCreated,
} from '@stageline/shared';
import { apiPath, callApi, getJson, isReplayed, type ApiCall } from '../client';
import { checkedBody, invalidInput, toId } from '../fields/coerce';
import { idempotencyKeyFor, nextIdempotencyKey } from '../idempotency';
import { throwForProblem } from '../middleware';
import { verifiedDeliveryBody } from './delivery-signature';
import { hookFilterOf, passesHookFilter, type InputData } from './hook-filter';

/** How many recent events `performList` shows as samples for the Zap editor. */
export const SAMPLE_COUNT = 3;

/**
 * How many of the event's newest events `performList` reads from the feed to find SAMPLE_COUNT to show: the feed
 * filters by event and pipeline, the trigger's stage and changed-field inputs are applied here (as `perform` does),
 * and erased bodies (a deleted item's, once its deliveries ended) are no sample.
 */
export const FEED_SAMPLE_WINDOW = 25;

/** How many replayed-but-deleted subscriptions `subscribeOnce` steps over before it subscribes without a key. */
export const MAX_SUBSCRIBE_KEYS = 5;

/**
 * Whether the REST-hook subscription `id` still exists: GET /v1/ext/webhooks/{id}/deliveries (`limit` 1) answers
 * 404 for a deleted one (CONTRACT "Events and deliveries"). Other errors are thrown by middleware.ts.
 */
async function subscriptionExists(z: ZObject, id: string): Promise<boolean> {
  const response = await callApi(z, { url: apiPath('webhooks', id, 'deliveries'), params: { limit: 1 }, skipThrowForStatus: true });
  if (response.status === 404) return false;
  if (response.status >= 400) throwForProblem(z, response);
  return true;
}

/**
 * POST /v1/ext/webhooks `body` with an Idempotency-Key (idempotency.ts; action `subscribe:<event>`, no override), so
 * a retried subscribe of the same Zap and target URL makes one subscription, not two that would both deliver.
 * A replayed answer names the subscription made then; if it was deleted since (the Zap was turned off and on again
 * within the key's 24 hours and Zapier kept its target URL), replaying it would leave the Zap without a hook, so the
 * next key of the chain (`nextIdempotencyKey`) is tried, up to MAX_SUBSCRIBE_KEYS, then a subscribe without a key.
 * A replayed ERROR (the server stores 4xx answers, CONTRACT "Idempotency") is the stored answer of an earlier attempt,
 * e.g. the 422 of a company then at its subscription limit: what caused it may have been fixed since, and a trigger
 * has no override field, so the next key of the chain is tried as well (derived from the key and the status).
 * @throws the problem of a fresh (not replayed) error answer, as the middleware would.
 */
async function subscribeOnce(z: ZObject, bundle: Bundle, body: WebhookSubscribe): Promise<WebhookSubscriptionCreated> {
  let key: string | undefined = idempotencyKeyFor(bundle, `subscribe:${body.event}`, body, false);
  for (let attempt = 0; ; attempt += 1) {
    const headers: Record<string, string> | undefined = key === undefined ? undefined : { [IDEMPOTENCY_KEY_HEADER]: key };
    const response: HttpResponse<WebhookSubscriptionCreated> = await callApi<WebhookSubscriptionCreated>(z, {
      method: 'POST',
      url: apiPath('webhooks'),
      body,
      headers,
      skipThrowForStatus: true,
    });
    const replayed = key !== undefined && isReplayed(response);
    if (response.status >= 400) {
      if (!replayed) throwForProblem(z, response);
    } else if (!replayed || (await subscriptionExists(z, response.data.id))) {
      return response.data;
    }
    const gone = response.status >= 400 ? `status-${response.status}` : response.data.id;
    key = attempt + 1 < MAX_SUBSCRIBE_KEYS ? nextIdempotencyKey(key!, gone) : undefined;
  }
}

/**
 * The resource an event delivers (and lists, and has a sample of): Item for item events, Task for task events, Note
 * for note events.
 */
export type ResourceOf<E extends EventName> = (typeof EVENT_RESOURCES)[E] extends 'items' ? Item : (typeof EVENT_RESOURCES)[E] extends 'notes' ? Note : Task;

export type { InputData };

/** What a trigger tells `restHookOperations`. */
export type RestHookOptions<E extends EventName, O> = {
  /** A delivered (or sample) payload as one Zapier result, with the `id` Zapier de-duplicates on. */
  toOutput: (payload: EventPayload<E>) => O;
} & (
  | ({
      /** With no recent event, `performList` shows the company's sample resource made a payload (the default). */
      samples?: 'resource-sample';
    } & SampleAdapter<E>)
  | {
      /**
       * With no recent event, `performList` shows the event's own sample (GET /v1/ext/webhooks/sample/{resource}
       * ?event=..., CONTRACT "Item deletion and erasure"), for events whose payload no resource shows (a deleted item).
       */
      samples: 'event-sample';
    }
);

/**
 * How the company's sample resource (GET /v1/ext/webhooks/sample/{resource}) becomes a payload of the event, for the
 * sample shown when the feed has no recent event. Required when the event's payload carries more than the resource
 * (item.updated and item.stage_changed add `changed_fields` and `previous`); otherwise optional and the resource is
 * used as it is.
 */
type SampleAdapter<E extends EventName> =
  ResourceOf<E> extends EventPayload<E>
    ? { asPayload?: (resource: ResourceOf<E>) => EventPayload<E> }
    : { asPayload: (resource: ResourceOf<E>) => EventPayload<E> };

/** The four hook functions of a trigger's `operation`. */
export interface RestHookOperations<O> {
  performSubscribe(z: ZObject, bundle: Bundle): Promise<WebhookSubscriptionCreated>;
  performUnsubscribe(z: ZObject, bundle: Bundle): Promise<{ id: string; removed: boolean }>;
  perform(z: ZObject, bundle: Bundle): Promise<O[]>;
  performList(z: ZObject, bundle: Bundle): Promise<O[]>;
}

/** The id field that marks a delivery body as a resource of `resource` (anything else posted to the URL is ignored). */
const ID_FIELD: Record<SampleResource, 'item_id' | 'task_id' | 'note_id'> = { items: 'item_id', tasks: 'task_id', notes: 'note_id' };

/**
 * The hook functions of a trigger on `event`:
 * - `performSubscribe`: POST /v1/ext/webhooks `{target_url: bundle.targetUrl, event, filter?}` with an
 *   Idempotency-Key (`subscribeOnce`); `filter` (hook-filter.ts) only when an input narrows the trigger; the 201
 *   subscription (with `id` and `secret`) becomes `subscribeData`.
 * - `performUnsubscribe`: DELETE /v1/ext/webhooks/{subscribeData.id} (204). A 404 means the subscription is already
 *   gone (deleted in Stageline, or removed after its target answered 410), which is what unsubscribing wants.
 * - `perform`: the delivery, once its Standard Webhooks signature is verified with `subscribeData.secret`
 *   (delivery-signature.ts; a forged or stale delivery stops the run), its body (one resource, or an array of them)
 *   through the step's filter (as far as the payload tells) and `toOutput`; bodies that are not the event's resource
 *   are ignored. No delivery: [].
 * - `performList`: the event's recent events from the feed (`recentPayloads`: GET /v1/ext/events?event=<event>, the
 *   filter's pipeline), their `data` through the step's filter and `toOutput`, newest first, at most SAMPLE_COUNT:
 *   the same output fields and `id` (the one Zapier de-duplicates on) as the delivery of that event. When there are
 *   none, or the key may not read them, the company's sample (GET
 *   /v1/ext/webhooks/sample/{resource}, one object built from the real blueprint, made a payload with `asPayload`;
 *   with `samples: 'event-sample'` the event's own sample, `?event=`), unfiltered so the editor always has one.
 */
export function restHookOperations<E extends EventName, O>(event: E, options: RestHookOptions<E, O>): RestHookOperations<O> {
  const resource: SampleResource = EVENT_RESOURCES[event];
  const idField = ID_FIELD[resource];
  const adapter = options.samples === 'event-sample' ? undefined : options.asPayload;
  const asPayload = (adapter ?? ((r: ResourceOf<E>) => r as unknown as EventPayload<E>)) as (r: ResourceOf<E>) => EventPayload<E>;
  const passes = (payload: EventPayload<E>, inputData: InputData) =>
    passesHookFilter(event, payload as Record<string, unknown>, hookFilterOf(event, inputData));
  const isPayload = (value: unknown): value is EventPayload<E> =>
    value !== null && typeof value === 'object' && typeof (value as Record<string, unknown>)[idField] === 'string';

  return {
    async performSubscribe(z, bundle) {
      const filter = hookFilterOf(event, bundle.inputData ?? {});
      const body = checkedBody(
        WebhookSubscribeSchema,
        filter === undefined ? { target_url: bundle.targetUrl, event } : { target_url: bundle.targetUrl, event, filter },
        'subscription',
      );
      return subscribeOnce(z, bundle, body);
    },

    async performUnsubscribe(z, bundle) {
      const id = toId(bundle.subscribeData?.id, 'Subscription ID');
      if (id === undefined) throw invalidInput('This Zap has no Stageline subscription to remove (subscribeData.id is missing).');
      const response = await callApi(z, { method: 'DELETE', url: apiPath('webhooks', id), skipThrowForStatus: true });
      if (response.status === 404) return { id, removed: false };
      if (response.status >= 400) throwForProblem(z, response);
      return { id, removed: true };
    },

    async perform(z, bundle) {
      const body = verifiedDeliveryBody(z, bundle);
      if (body === undefined) return [];
      const inputData = bundle.inputData ?? {};
      const received = (Array.isArray(body) ? body : [body]).filter(isPayload);
      return received.filter((payload) => passes(payload, inputData)).map(options.toOutput);
    },

    async performList(z, bundle) {
      const inputData = bundle.inputData ?? {};
      const recent = (await recentPayloads(z, event, hookFilterOf(event, inputData))).filter(isPayload);
      const shown = recent.filter((payload) => passes(payload, inputData)).slice(0, SAMPLE_COUNT);
      if (shown.length > 0) return shown.map(options.toOutput);
      if (options.samples === 'event-sample') {
        const sample = await getJson<EventPayload<E>>(z, apiPath('webhooks', 'sample', resource), { event });
        return [options.toOutput(sample)];
      }
      const sample = await getJson<ResourceOf<E>>(z, apiPath('webhooks', 'sample', resource));
      return [options.toOutput(asPayload(sample))];
    },
  };
}

/**
 * The delivery bodies of `event`'s newest retained events (CONTRACT "Events feed": GET /v1/ext/events?event=<event>,
 * newest first, `limit` FEED_SAMPLE_WINDOW, `pipeline_id` when the step's filter names one; the feed applies it to
 * item, task and note events alike), erased bodies left out. `[]` when the key may not read them (403: a key with
 * `hooks:manage` but not `items:read` / `tasks:read`) or the server has no feed (404: a self-hosted install older than
 * the feed), so the caller shows the sample instead. Other errors are thrown as the middleware would.
 */
export async function recentPayloads(z: ZObject, event: EventName, filter: WebhookFilter | undefined): Promise<unknown[]> {
  const params: ApiCall['params'] = { event, limit: FEED_SAMPLE_WINDOW };
  if (filter?.pipeline_id !== undefined) params.pipeline_id = filter.pipeline_id;
  const response = await callApi<FeedEvent[]>(z, { url: apiPath('events'), params, skipThrowForStatus: true });
  if (response.status === 403 || response.status === 404) return [];
  if (response.status >= 400) throwForProblem(z, response);
  if (!Array.isArray(response.data)) return [];
  return response.data
    .filter((feedEvent) => feedEvent?.event === event && feedEvent.data !== null && typeof feedEvent.data === 'object')
    .map((feedEvent) => feedEvent.data)
    .filter((data) => data.erased !== true);
}

/**
 * Trigger `item_created` ("New Item"): a REST hook on the `item.created` event (spec "REST hooks" and "Events";
 * CONTRACT "Events and deliveries"). Subscribing stores the subscription as `bundle.subscribeData`; each delivery's
 * body is the item itself and arrives as `bundle.cleanedRequest`.
 */
import { defineTrigger, type Bundle, type ZObject } from 'zapier-platform-core';
import { WebhookSubscribeSchema, type EventName, type Item, type WebhookSubscriptionCreated } from '@stageline/shared';
import { apiPath, callApi, getJson, sendJson, withItemId, type ZapierItem } from '../client';
import { checkedBody, invalidInput, toId } from '../fields/coerce';
import { ITEM_OUTPUT_FIELDS, ITEM_SAMPLE, customOutputFields, pipelineInputField } from '../fields/item-fields';
import { throwForProblem } from '../middleware';

/** The event this trigger subscribes to. */
export const ITEM_CREATED_EVENT: EventName = 'item.created';

/** How many recent items `performList` loads as samples for the Zap editor. */
const SAMPLE_COUNT = 3;

/** POST /v1/ext/webhooks {target_url, event}: the 201 subscription (with `id` and `secret`) becomes `subscribeData`. */
export async function performSubscribe(z: ZObject, bundle: Bundle): Promise<WebhookSubscriptionCreated> {
  const body = checkedBody(WebhookSubscribeSchema, { target_url: bundle.targetUrl, event: ITEM_CREATED_EVENT }, 'subscription');
  return sendJson<WebhookSubscriptionCreated>(z, 'POST', apiPath('webhooks'), body);
}

/**
 * DELETE /v1/ext/webhooks/{subscribeData.id} (204). A 404 means the subscription is already gone (deleted in
 * Stageline, or removed after its target answered 410), which is what unsubscribing wants, so it is not an error.
 */
export async function performUnsubscribe(z: ZObject, bundle: Bundle): Promise<{ id: string; removed: boolean }> {
  const id = toId(bundle.subscribeData?.id, 'Subscription ID');
  if (id === undefined) throw invalidInput('This Zap has no Stageline subscription to remove (subscribeData.id is missing).');
  const response = await callApi(z, { method: 'DELETE', url: apiPath('webhooks', id), skipThrowForStatus: true });
  if (response.status === 404) return { id, removed: false };
  if (response.status >= 400) throwForProblem(z, response);
  return { id, removed: true };
}

/** A delivery body that looks like an Item (anything else posted to the hook URL is ignored). */
function isItem(value: unknown): value is Item {
  return value !== null && typeof value === 'object' && typeof (value as { item_id?: unknown }).item_id === 'string';
}

/**
 * The delivered item with `id` = `item_id` (Zapier de-duplicates on `id`; an item is created once).
 * With a Pipeline chosen, items of other pipelines are skipped.
 */
export async function perform(_z: ZObject, bundle: Bundle): Promise<ZapierItem[]> {
  const payload: unknown = bundle.cleanedRequest;
  const pipelineId = toId(bundle.inputData?.pipeline_id, 'Pipeline');
  const received = (Array.isArray(payload) ? payload : [payload]).filter(isItem);
  return received.filter((item) => pipelineId === undefined || item.pipeline_id === pipelineId).map(withItemId);
}

/**
 * Samples for the Zap editor: the newest items (GET /v1/ext/items?limit=3, of the chosen pipeline), or the
 * company's sample payload (GET /v1/ext/webhooks/sample/items, one item built from the real blueprint) when there are
 * none yet or the key may manage hooks but not read items.
 */
export async function performList(z: ZObject, bundle: Bundle): Promise<ZapierItem[]> {
  const pipelineId = toId(bundle.inputData?.pipeline_id, 'Pipeline');
  const response = await callApi<Item[]>(z, {
    url: apiPath('items'),
    params: { limit: SAMPLE_COUNT, pipeline_id: pipelineId },
    skipThrowForStatus: true,
  });
  if (response.status >= 400 && response.status !== 403) throwForProblem(z, response);
  if (response.status < 400 && Array.isArray(response.data) && response.data.length > 0) {
    return response.data.map(withItemId);
  }
  const sample = await getJson<Item>(z, apiPath('webhooks', 'sample', 'items'));
  return [withItemId(sample)];
}

export default defineTrigger({
  key: 'item_created',
  noun: 'Item',
  display: {
    label: 'New Item',
    description: 'Triggers when an item is created in Stageline (instantly, through a REST hook).',
  },
  operation: {
    type: 'hook',
    inputFields: [
      pipelineInputField({
        required: false,
        helpText: 'Only trigger for items created in this pipeline. Leave empty to trigger for every pipeline.',
      }),
    ],
    performSubscribe,
    performUnsubscribe,
    perform,
    performList,
    sample: ITEM_SAMPLE,
    outputFields: [...ITEM_OUTPUT_FIELDS, customOutputFields],
  },
});

/**
 * Trigger `item_created` ("New Item"): a REST hook on the `item.created` event (spec "REST hooks" and "Events";
 * CONTRACT "Events and deliveries"); the shared hook plumbing is in rest-hook.ts. Each delivery's body is the item
 * itself. Output `id` = `item_id` (Zapier de-duplicates on `id`; an item is created once). With a Pipeline (and
 * Stage) chosen, the subscription's filter (hook-filter.ts) makes Stageline send only items created there, and
 * samples (the events feed's recent `item.created` events) come from there.
 */
import { defineTrigger } from 'zapier-platform-core';
import type { EventName } from '@stageline/shared';
import { withItemId } from '../client';
import { hookFilterInputFields } from '../fields/hook-filter-fields';
import { ITEM_OUTPUT_FIELDS, ITEM_SAMPLE, customOutputFields } from '../fields/item-fields';
import { restHookOperations } from './rest-hook';

/** The event this trigger subscribes to. */
export const ITEM_CREATED_EVENT = 'item.created' satisfies EventName;

/**
 * The hook functions: subscribe/unsubscribe `item.created`; `perform` maps a delivered item to `{id: item_id, ...}`;
 * `performList` shows the newest `item.created` events of the feed (of the chosen pipeline and stage) the same way,
 * else the company's sample item (GET /v1/ext/webhooks/sample/items).
 */
export const { performSubscribe, performUnsubscribe, perform, performList } = restHookOperations(ITEM_CREATED_EVENT, {
  toOutput: withItemId,
});

export default defineTrigger({
  key: 'item_created',
  noun: 'Item',
  display: {
    label: 'New Item',
    description: 'Triggers when an item is created in Stageline (instantly, through a REST hook).',
  },
  operation: {
    type: 'hook',
    inputFields: hookFilterInputFields(ITEM_CREATED_EVENT, {
      pipeline: 'Only trigger for items created in this pipeline. Leave empty to trigger for every pipeline.',
      stage: 'Only trigger for items created in this stage (choose the pipeline first). Leave empty for any stage.',
    }),
    performSubscribe,
    performUnsubscribe,
    perform,
    performList,
    sample: ITEM_SAMPLE,
    outputFields: [...ITEM_OUTPUT_FIELDS, customOutputFields],
  },
});

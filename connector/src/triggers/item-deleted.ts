/**
 * Trigger `item_deleted` ("Item Deleted"): a REST hook on the `item.deleted` event (CONTRACT "Item deletion and
 * erasure"; plumbing in rest-hook.ts). The body is the item's last state plus `deleted_at`. Output `id` = `item_id`
 * (an item is deleted once; a redelivery is dropped by Zapier's de-duplication).
 *
 * Samples: the feed's recent `item.deleted` events whose body is not yet erased, else the event's own sample
 * (GET /v1/ext/webhooks/sample/items?event=item.deleted, built from the company's real blueprint). Optional inputs
 * Pipeline and Stage (the stage the item was in) become the subscription's filter (hook-filter.ts).
 *
 * Stageline erases a deleted item's values once its deliveries end: the Zap gets them once, in this run.
 */
import { defineTrigger } from 'zapier-platform-core';
import type { EventName, ItemDeletedEvent } from '@stageline/shared';
import { withItemId, type ZapierItem } from '../client';
import { hookFilterInputFields } from '../fields/hook-filter-fields';
import { ITEM_OUTPUT_FIELDS, ITEM_SAMPLE, customOutputFields } from '../fields/item-fields';
import { restHookOperations } from './rest-hook';

/** The event this trigger subscribes to. */
export const ITEM_DELETED_EVENT = 'item.deleted' satisfies EventName;

/**
 * The hook functions: subscribe/unsubscribe `item.deleted` (with the step's filter); `perform` maps a delivered
 * deletion to `{id: item_id, ...}`; `performList` shows recent deletions from the feed, else the item.deleted sample.
 */
export const { performSubscribe, performUnsubscribe, perform, performList } = restHookOperations(ITEM_DELETED_EVENT, {
  toOutput: withItemId,
  samples: 'event-sample',
});

/** A realistic deletion: the sample item, deleted. */
export const ITEM_DELETED_SAMPLE: ZapierItem<ItemDeletedEvent> = { ...ITEM_SAMPLE, deleted_at: '2026-03-09T11:45:00.000Z', deleted_note_ids: [] };

export default defineTrigger({
  key: 'item_deleted',
  noun: 'Item',
  display: {
    label: 'Item Deleted',
    description:
      'Triggers when an item is deleted in Stageline (instantly, through a REST hook), with its last values, so other apps can remove or archive their copy.',
  },
  operation: {
    type: 'hook',
    inputFields: hookFilterInputFields(ITEM_DELETED_EVENT, {
      pipeline: 'Only trigger for items deleted from this pipeline. Leave empty for every pipeline.',
      stage: 'Only trigger for items that were in this stage when deleted (choose the pipeline first). Leave empty for any stage.',
    }),
    performSubscribe,
    performUnsubscribe,
    perform,
    performList,
    sample: ITEM_DELETED_SAMPLE,
    outputFields: [...ITEM_OUTPUT_FIELDS, { key: 'deleted_at', label: 'Deleted At', type: 'datetime' }, customOutputFields],
  },
});

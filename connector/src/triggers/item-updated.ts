/**
 * Trigger `item_updated` ("Updated Item"): a REST hook on the `item.updated` event (spec "Events"; CONTRACT "Events
 * and deliveries"; plumbing in rest-hook.ts). Stageline sends it for every real change of an item (a request that
 * changes nothing sends none); the body is the item after the change plus `changed_fields` (the names of the fields
 * that changed: `name`, `stage`, `status`, `contact_id`, `source` or a custom field key) and `previous` (the value
 * before the change of each of them, plus stage and status; CONTRACT "Previous values in update events"), shown as
 * "Previous Stage", "Previous Deal value", ... Optional inputs Pipeline, Stage and "Only when these fields change"
 * become the subscription's filter (hook-filter.ts), so Stageline sends only the changes the Zap wants.
 *
 * Output `id` = `${item_id}:${version}`: Zapier de-duplicates trigger results on `id`, so an id that stayed the
 * item id would trigger only for the first update of each item. Every change increments `version`, so each update
 * triggers once, and a redelivery of the same update (delivery is at least once) is dropped as a duplicate.
 */
import { defineTrigger } from 'zapier-platform-core';
import type { EventName } from '@stageline/shared';
import { hookFilterInputFields } from '../fields/hook-filter-fields';
import { ITEM_CHANGE_OUTPUT_FIELDS, ITEM_CHANGE_SAMPLE, asItemChange, itemChangeOutputFields, withChangeId } from '../fields/item-fields';
import { restHookOperations } from './rest-hook';

/** The event this trigger subscribes to. */
export const ITEM_UPDATED_EVENT = 'item.updated' satisfies EventName;

/**
 * The hook functions: subscribe/unsubscribe `item.updated`; `perform` maps a delivered change to
 * `{id: "<item_id>:<version>", ...}`; `performList` shows the newest `item.updated` events of the feed (their real
 * `changed_fields` and `previous`, through the step's filter) the same way, else the sample item as a change
 * without a known last change (empty `changed_fields`, `previous` = its stage and status).
 */
export const { performSubscribe, performUnsubscribe, perform, performList } = restHookOperations(ITEM_UPDATED_EVENT, {
  toOutput: withChangeId,
  asPayload: asItemChange,
});

export default defineTrigger({
  key: 'item_updated',
  noun: 'Item',
  display: {
    label: 'Updated Item',
    description:
      'Triggers when an item is changed in Stageline: renamed, moved to another stage or status, or a custom field edited (instantly, through a REST hook), optionally only for some pipelines, stages or fields. Each change triggers once; Changed Fields lists what changed and the Previous fields what it was before.',
  },
  operation: {
    type: 'hook',
    inputFields: hookFilterInputFields(ITEM_UPDATED_EVENT),
    performSubscribe,
    performUnsubscribe,
    perform,
    performList,
    sample: ITEM_CHANGE_SAMPLE,
    outputFields: [...ITEM_CHANGE_OUTPUT_FIELDS, itemChangeOutputFields],
  },
});

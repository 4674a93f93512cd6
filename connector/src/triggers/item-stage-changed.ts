/**
 * Trigger `item_stage_changed` ("Item Moved to Stage"): a REST hook on the `item.stage_changed` event (spec
 * "Events"; CONTRACT "Events and deliveries"; plumbing in rest-hook.ts). Stageline sends it, next to
 * `item.updated`, for every update that moves an item to another stage; the body is the item after the move plus
 * `changed_fields` and `previous` (`{stage, status}` names before the move).
 *
 * Optional inputs narrow it down: a Pipeline, and a Stage of that pipeline (the stage the item moves INTO, i.e. the
 * delivered `stage_id`), sent as the subscription's filter (hook-filter.ts) so Stageline sends only those moves. Output `id` = `${item_id}:${version}`, as for "Updated Item": an item can move many times
 * (and back), and each move has its own version.
 */
import { defineTrigger } from 'zapier-platform-core';
import type { EventName } from '@stageline/shared';
import { hookFilterInputFields } from '../fields/hook-filter-fields';
import { ITEM_CHANGE_OUTPUT_FIELDS, ITEM_CHANGE_SAMPLE, asItemChange, itemChangeOutputFields, withChangeId } from '../fields/item-fields';
import { restHookOperations } from './rest-hook';

/** The event this trigger subscribes to. */
export const ITEM_STAGE_CHANGED_EVENT = 'item.stage_changed' satisfies EventName;

/**
 * The hook functions: subscribe/unsubscribe `item.stage_changed` (filtered by the chosen pipeline/stage); `perform` keeps the moves into the chosen
 * pipeline/stage and maps them to `{id: "<item_id>:<version>", ...}`; `performList` shows the newest
 * `item.stage_changed` events of the feed into the chosen pipeline/stage the same way, else the sample item.
 */
export const { performSubscribe, performUnsubscribe, perform, performList } = restHookOperations(ITEM_STAGE_CHANGED_EVENT, {
  toOutput: withChangeId,
  asPayload: asItemChange,
});

export default defineTrigger({
  key: 'item_stage_changed',
  noun: 'Item',
  display: {
    label: 'Item Moved to Stage',
    description:
      'Triggers when an item moves to another stage in Stageline (instantly, through a REST hook), optionally only for moves into one stage. Previous Stage/Status tell where it came from.',
  },
  operation: {
    type: 'hook',
    inputFields: hookFilterInputFields(ITEM_STAGE_CHANGED_EVENT, {
      stage: 'Only trigger when an item moves into this stage. Leave empty for any stage.',
    }),
    performSubscribe,
    performUnsubscribe,
    perform,
    performList,
    sample: ITEM_CHANGE_SAMPLE,
    outputFields: [...ITEM_CHANGE_OUTPUT_FIELDS, itemChangeOutputFields],
  },
});

/**
 * Trigger `item_stage_changed` ("Item Moved to Stage"): a REST hook on the `item.stage_changed` event (spec
 * "Events"; CONTRACT "Events and deliveries"; plumbing in rest-hook.ts). Stageline sends it, next to
 * `item.updated`, for every update that moves an item to another stage; the body is the item after the move plus
 * `changed_fields` and `previous` (`{stage, status}` names before the move).
 *
 * Optional inputs narrow it down: a Pipeline, and a Stage of that pipeline (the stage the item moves INTO, i.e. the
 * delivered `stage_id`). Output `id` = `${item_id}:${version}`, as for "Updated Item": an item can move many times
 * (and back), and each move has its own version.
 */
import { defineTrigger } from 'zapier-platform-core';
import type { EventName, ItemChangedEvent } from '@stageline/shared';
import { toId } from '../fields/coerce';
import {
  ITEM_CHANGE_OUTPUT_FIELDS,
  ITEM_CHANGE_SAMPLE,
  asItemChange,
  customOutputFields,
  pipelineInputField,
  stageInputField,
  withChangeId,
} from '../fields/item-fields';
import { restHookOperations, type InputData } from './rest-hook';

/** The event this trigger subscribes to. */
export const ITEM_STAGE_CHANGED_EVENT = 'item.stage_changed' satisfies EventName;

/** The chosen Pipeline and Stage (undefined when left empty). */
function chosen(inputData: InputData): { pipelineId?: string; stageId?: string } {
  return { pipelineId: toId(inputData.pipeline_id, 'Pipeline'), stageId: toId(inputData.stage_id, 'Stage') };
}

/** Whether a move matches the chosen Pipeline and Stage (the stage moved into). */
export function matchesChosenStage(change: ItemChangedEvent, inputData: InputData): boolean {
  const { pipelineId, stageId } = chosen(inputData);
  return (pipelineId === undefined || change.pipeline_id === pipelineId) && (stageId === undefined || change.stage_id === stageId);
}

/**
 * The hook functions: subscribe/unsubscribe `item.stage_changed`; `perform` keeps the moves into the chosen
 * pipeline/stage and maps them to `{id: "<item_id>:<version>", ...}`; `performList` shows the newest items in the
 * chosen pipeline/stage (GET /v1/ext/items?limit=3&pipeline_id=&stage_id=) the same way, else the sample item.
 */
export const { performSubscribe, performUnsubscribe, perform, performList } = restHookOperations(ITEM_STAGE_CHANGED_EVENT, {
  toOutput: withChangeId,
  asPayload: asItemChange,
  filter: matchesChosenStage,
  listParams: (inputData) => {
    const { pipelineId, stageId } = chosen(inputData);
    return { pipeline_id: pipelineId, stage_id: stageId };
  },
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
    inputFields: [
      pipelineInputField({
        required: false,
        helpText: 'Only trigger for items of this pipeline (choose it to pick a stage below). Leave empty for every pipeline.',
      }),
      stageInputField({ required: false, helpText: 'Only trigger when an item moves into this stage. Leave empty for any stage.' }),
    ],
    performSubscribe,
    performUnsubscribe,
    perform,
    performList,
    sample: ITEM_CHANGE_SAMPLE,
    outputFields: [...ITEM_CHANGE_OUTPUT_FIELDS, customOutputFields],
  },
});

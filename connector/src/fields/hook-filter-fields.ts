/**
 * The optional inputs of the REST-hook triggers that become the subscription's server-side filter (CONTRACT
 * "Subscription filters (REST hooks)"; triggers/hook-filter.ts reads them): Pipeline, Stage (item events only) and
 * "Only when these fields change" (item.updated: the built-in fields plus the pipeline's custom fields; task.updated:
 * the task fields).
 */
import type { Bundle, PlainInputField, ZObject } from 'zapier-platform-core';
import { ITEM_CHANGE_FIELDS, TASK_CHANGE_FIELDS, type EventName } from '@stageline/shared';
import { FILTER_FIELDS_INPUT, acceptsFieldFilter, isItemEvent } from '../triggers/hook-filter';
import { ITEM_CHANGE_FIELD_LABELS, customFieldsOfStep, pipelineInputField, stageInputField } from './item-fields';
import { TASK_FIELD_LABELS } from './task-fields';

/** A dynamic input field: Zapier calls it while the step is edited. */
type DynamicInputField = (z: ZObject, bundle: Bundle) => Promise<PlainInputField[]>;

/** Help texts of one trigger's filter inputs (defaults below). */
export interface HookFilterTexts {
  pipeline?: string;
  stage?: string;
}

/** A choice of the fields list. */
type Choice = { value: string; label: string; sample: string };

/** The "Only when these fields change" input with `choices`. */
function fieldsInput(choices: Choice[], what: string): PlainInputField {
  return {
    key: FILTER_FIELDS_INPUT,
    label: 'Only when these fields change',
    type: 'string',
    list: true,
    required: false,
    choices,
    helpText: `Only trigger when at least one of these fields of the ${what} changed (Stageline filters before sending, so other changes use no Zap tasks). Leave empty for every change.`,
  };
}

/** The item-change choices: the built-in fields, then the custom fields of the chosen pipeline (or of every pipeline). */
export const itemChangedFieldsInput: DynamicInputField = async (z, bundle) => {
  const builtIn = ITEM_CHANGE_FIELDS.map((key) => ({ value: key, label: ITEM_CHANGE_FIELD_LABELS[key], sample: key }));
  const custom = (await customFieldsOfStep(z, bundle)).map((field) => ({ value: field.key, label: field.label, sample: field.key }));
  return [fieldsInput([...builtIn, ...custom], 'item')];
};

/** The task-change choices (TASK_CHANGE_FIELDS, labelled as the task's output fields). */
export const TASK_CHANGED_FIELDS_INPUT: PlainInputField = fieldsInput(
  TASK_CHANGE_FIELDS.map((key) => ({ value: key, label: TASK_FIELD_LABELS[key].label!, sample: key })),
  'task',
);

/**
 * The filter inputs of a trigger on `event`, in form order: Pipeline (every event), Stage (item events; depends on the
 * pipeline), "Only when these fields change" (item.updated and task.updated).
 */
export function hookFilterInputFields(event: EventName, texts: HookFilterTexts = {}): (PlainInputField | DynamicInputField)[] {
  const item = isItemEvent(event);
  const fields: (PlainInputField | DynamicInputField)[] = [
    pipelineInputField({
      required: false,
      helpText:
        texts.pipeline ??
        (item
          ? 'Only trigger for items of this pipeline (choose it to pick a stage below). Leave empty for every pipeline.'
          : 'Only trigger for tasks linked to an item of this pipeline. Leave empty for every task.'),
    }),
  ];
  if (item) {
    fields.push(
      stageInputField({
        required: false,
        helpText: texts.stage ?? 'Only trigger for items in this stage after the change (choose the pipeline first). Leave empty for any stage.',
      }),
    );
  }
  if (acceptsFieldFilter(event)) fields.push(item ? itemChangedFieldsInput : TASK_CHANGED_FIELDS_INPUT);
  return fields;
}

/**
 * The built-in Item fields (spec "Item (response)" + CONTRACT "Extra Item fields") as Zapier output fields, the
 * shared input fields of item steps, and a realistic sample in the shape of `@stageline/shared`'s Item.
 */
import type { Bundle, PlainInputField, PlainOutputField, ZObject } from 'zapier-platform-core';
import { ITEM_CHANGE_FIELDS, type CustomField, type DuplicateMatch, type Item, type ItemChangeField, type ItemChangedEvent, type Pipeline } from '@stageline/shared';
import { apiPath, fetchCustomFields, getAllPages, type ZapierItem } from '../client';
import { chosenId } from './coerce';
import { toInputFields, toOutputField, unionOfCustomFields, type CustomFieldMode } from './custom-fields';

/** Output fields of every Item step, labelled for the Zap editor. */
export const ITEM_OUTPUT_FIELDS: PlainOutputField[] = [
  { key: 'id', label: 'ID (same as Item ID)', type: 'string' },
  { key: 'item_id', label: 'Item ID', type: 'string' },
  { key: 'short_id', label: 'Short ID', type: 'string' },
  { key: 'name', label: 'Name', type: 'string' },
  { key: 'pipeline', label: 'Pipeline', type: 'string' },
  { key: 'pipeline_id', label: 'Pipeline ID', type: 'string' },
  { key: 'stage', label: 'Stage', type: 'string' },
  { key: 'stage_id', label: 'Stage ID', type: 'string' },
  { key: 'status', label: 'Status', type: 'string' },
  { key: 'status_id', label: 'Status ID', type: 'string' },
  { key: 'contact_id', label: 'Contact ID', type: 'string' },
  { key: 'source', label: 'Source', type: 'string' },
  { key: 'version', label: 'Version', type: 'integer' },
  { key: 'created_at', label: 'Created At', type: 'datetime' },
  { key: 'updated_at', label: 'Updated At', type: 'datetime' },
];

/** The extra output field of duplicate matches (CONTRACT "Duplicate check"). */
export const MATCHED_ON_OUTPUT_FIELD: PlainOutputField = { key: 'matched_on', label: 'Matched On', type: 'string', list: true };

/** A realistic item, as the demo company's Sales pipeline returns it (custom fields email and deal_value). */
export const ITEM_SAMPLE: ZapierItem<Item> = {
  id: '5f0c6a53-8a2e-4b7e-9a51-2f1d0e6c4b11',
  item_id: '5f0c6a53-8a2e-4b7e-9a51-2f1d0e6c4b11',
  short_id: 'SALES-42',
  name: 'Acme Corp: 50 seats',
  pipeline: 'Sales',
  pipeline_id: '0b7f3c1e-2d4a-4e8f-9c6b-7a5d3e1f2a90',
  stage: 'Qualified',
  stage_id: '3c9e1a7b-5f2d-4b8e-a6c4-1d0f9e8b7a62',
  status: 'Open',
  status_id: '9a4b2c6d-8e1f-4a3b-b5c7-d9e0f1a2b3c4',
  contact_id: 'crm-contact-1187',
  source: 'zapier',
  email: 'ada@acme.example',
  deal_value: 12500,
  created_at: '2026-03-01T09:30:00.000Z',
  updated_at: '2026-03-02T14:05:12.000Z',
  version: 2,
};

/** A sample duplicate match. */
export const DUPLICATE_MATCH_SAMPLE: ZapierItem<DuplicateMatch> = { ...ITEM_SAMPLE, matched_on: ['email'] };

/** An item change (item.updated / item.stage_changed payload) with Zapier's dedupe key `id` = `<item_id>:<version>`. */
export type ZapierItemChange = ZapierItem<ItemChangedEvent>;

/**
 * Adds `id` = `${item_id}:${version}` to an item change. Zapier de-duplicates trigger results on `id`, and every real
 * change of an item increments its version, so each update of the same item gets its own id (and triggers once),
 * while a redelivery of the same update (at-least-once delivery) keeps its id and is dropped.
 */
export function withChangeId(change: ItemChangedEvent): ZapierItemChange {
  return { ...change, id: `${change.item_id}:${change.version}` };
}

/**
 * A listed item (GET /items or the sample endpoint) as an item change, for trigger samples: the list does not say
 * what changed last, so `changed_fields` is empty and `previous` repeats the current stage and status. A payload that
 * carries its own change (an event sample) keeps it.
 */
export function asItemChange(item: Item): ItemChangedEvent {
  return { changed_fields: [], previous: { stage: item.stage, status: item.status }, ...item };
}

/**
 * Output fields of the item-change triggers ("Updated Item", "Item Moved to Stage"): the item fields with `id`
 * relabelled (it is item ID and version), then what changed and the stage and status before the change. Zapier
 * flattens `previous.stage` to `previous__stage`.
 */
export const ITEM_CHANGE_OUTPUT_FIELDS: PlainOutputField[] = [
  { key: 'id', label: 'ID (Item ID:Version, one per update)', type: 'string' },
  ...ITEM_OUTPUT_FIELDS.filter((field) => field.key !== 'id'),
  { key: 'changed_fields', label: 'Changed Fields', type: 'string', list: true },
  { key: 'previous__stage', label: 'Previous Stage', type: 'string' },
  { key: 'previous__status', label: 'Previous Status', type: 'string' },
];

/** A realistic item change: the sample item moved from Lead to Qualified by its second version, its deal value raised. */
export const ITEM_CHANGE_SAMPLE: ZapierItemChange = withChangeId({
  ...ITEM_SAMPLE,
  changed_fields: ['stage', 'deal_value'],
  previous: { stage: 'Lead', status: 'Open', deal_value: 10000 },
});

/** Dropdown of the company's pipelines (hidden trigger `pipeline_list`). */
export function pipelineInputField(options: { required: boolean; helpText: string }): PlainInputField {
  return {
    key: 'pipeline_id',
    label: 'Pipeline',
    required: options.required,
    dynamic: 'pipeline_list.id.name',
    altersDynamicFields: true,
    helpText: options.helpText,
  };
}

/** Dropdown of the stages of the chosen pipeline (hidden trigger `stage_list`). */
export function stageInputField(options: { required: boolean; helpText: string }): PlainInputField {
  return {
    key: 'stage_id',
    label: 'Stage',
    required: options.required,
    dynamic: 'stage_list.id.name',
    dependsOn: ['pipeline_id'],
    altersDynamicFields: true,
    helpText: options.helpText,
  };
}

/** Dropdown of the statuses the chosen stage offers (hidden trigger `status_list`). */
export function statusInputField(helpText: string): PlainInputField {
  return {
    key: 'status_id',
    label: 'Status',
    required: false,
    dynamic: 'status_list.id.name',
    dependsOn: ['pipeline_id', 'stage_id'],
    helpText,
  };
}

/**
 * Dynamic input fields: the custom fields of the pipeline chosen in `pipeline_id` (none until one is chosen,
 * or when the value is mapped from an earlier step and so unknown while editing).
 */
export function customInputFieldsOfChosenPipeline(mode: CustomFieldMode) {
  return async (z: ZObject, bundle: Bundle): Promise<PlainInputField[]> => {
    const pipelineId = chosenPipelineId(bundle);
    if (pipelineId === undefined) return [];
    return toInputFields(await fetchCustomFields(z, pipelineId), mode);
  };
}

/**
 * The custom fields a step's output can carry: those of the pipeline chosen in `pipeline_id`, or when none is chosen
 * the union of the custom fields of every pipeline of the company (GET /v1/ext/pipelines, then each blueprint).
 */
export async function customFieldsOfStep(z: ZObject, bundle: Bundle): Promise<CustomField[]> {
  const pipelineId = chosenPipelineId(bundle);
  if (pipelineId !== undefined) return fetchCustomFields(z, pipelineId);
  const pipelines = await getAllPages<Pipeline>(z, apiPath('pipelines'));
  const lists: CustomField[][] = [];
  for (const pipeline of pipelines) lists.push(await fetchCustomFields(z, pipeline.id));
  return unionOfCustomFields(lists);
}

/** Dynamic output fields of item steps: the custom fields of the step (`customFieldsOfStep`) under their plain keys. */
export async function customOutputFields(z: ZObject, bundle: Bundle): Promise<PlainOutputField[]> {
  return (await customFieldsOfStep(z, bundle)).map(toOutputField);
}

/** Labels of the built-in item fields `changed_fields` can name (CONTRACT "Previous values in update events"). */
export const ITEM_CHANGE_FIELD_LABELS: Record<ItemChangeField, string> = {
  name: 'Name',
  stage: 'Stage',
  status: 'Status',
  contact_id: 'Contact ID',
  source: 'Source',
};

/**
 * Dynamic output fields of the item-change triggers: the custom fields, then the value before the change of every
 * other field `previous` can hold (CONTRACT "Previous values in update events"), labelled "Previous <label>":
 * Previous Name, Previous Contact ID, Previous Source and "Previous <custom field label>" from the blueprint (Zapier
 * flattens `previous.deal_value` to `previous__deal_value`). Previous Stage and Status are static fields.
 */
export async function itemChangeOutputFields(z: ZObject, bundle: Bundle): Promise<PlainOutputField[]> {
  const custom = await customFieldsOfStep(z, bundle);
  const builtIn = ITEM_CHANGE_FIELDS.filter((key) => key !== 'stage' && key !== 'status').map(
    (key): PlainOutputField => ({ key: `previous__${key}`, label: `Previous ${ITEM_CHANGE_FIELD_LABELS[key]}`, type: 'string' }),
  );
  const previousCustom = custom.map((field): PlainOutputField => ({ ...toOutputField(field), key: `previous__${field.key}`, label: `Previous ${field.label}` }));
  return [...custom.map(toOutputField), ...builtIn, ...previousCustom];
}

/** The pipeline id of the step, unless blank or a still-unresolved mapping ("{{123__pipeline_id}}"). */
function chosenPipelineId(bundle: Bundle): string | undefined {
  return chosenId(bundle.inputData?.pipeline_id);
}

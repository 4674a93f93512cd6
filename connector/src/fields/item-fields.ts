/**
 * The built-in Item fields (spec "Item (response)" + CONTRACT "Extra Item fields") as Zapier output fields, the
 * shared input fields of item steps, and a realistic sample in the shape of `@stageline/shared`'s Item.
 */
import type { Bundle, PlainInputField, PlainOutputField, ZObject } from 'zapier-platform-core';
import type { CustomField, DuplicateMatch, Item, ItemChangedEvent, Pipeline } from '@stageline/shared';
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
 * what changed last, so `changed_fields` is empty and `previous` repeats the current stage and status.
 */
export function asItemChange(item: Item): ItemChangedEvent {
  return { ...item, changed_fields: [], previous: { stage: item.stage, status: item.status } };
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

/** A realistic item change: the sample item moved from Lead to Qualified by its second version. */
export const ITEM_CHANGE_SAMPLE: ZapierItemChange = withChangeId({
  ...ITEM_SAMPLE,
  changed_fields: ['stage', 'status'],
  previous: { stage: 'Lead', status: 'Open' },
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
 * Dynamic output fields of item steps: the custom fields of the chosen pipeline, or when none is chosen the union of
 * the custom fields of every pipeline of the company.
 */
export async function customOutputFields(z: ZObject, bundle: Bundle): Promise<PlainOutputField[]> {
  const pipelineId = chosenPipelineId(bundle);
  let fields: CustomField[];
  if (pipelineId !== undefined) {
    fields = await fetchCustomFields(z, pipelineId);
  } else {
    const pipelines = await getAllPages<Pipeline>(z, apiPath('pipelines'));
    const lists: CustomField[][] = [];
    for (const pipeline of pipelines) lists.push(await fetchCustomFields(z, pipeline.id));
    fields = unionOfCustomFields(lists);
  }
  return fields.map(toOutputField);
}

/** The pipeline id of the step, unless blank or a still-unresolved mapping ("{{123__pipeline_id}}"). */
function chosenPipelineId(bundle: Bundle): string | undefined {
  return chosenId(bundle.inputData?.pipeline_id);
}

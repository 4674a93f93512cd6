/**
 * Create `update_item` ("Update Item"): PATCH /v1/ext/items/{item_id} (spec "Items", update body: only the fields
 * to change; CONTRACT "Responses": 200 with the full Item, 409 with `current_version` on a version conflict).
 */
import { defineCreate, type Bundle, type ZObject } from 'zapier-platform-core';
import { ItemUpdateSchema, type Item, type ItemUpdate } from '@stageline/shared';
import { apiPath, fetchCustomFields, sendJson, withItemId, type ZapierItem } from '../client';
import { checkedBody, definedOnly, invalidInput, requireId, toId, toInteger, toText } from '../fields/coerce';
import { collectMetadata, hasCustomValues } from '../fields/custom-fields';
import { itemInputField } from '../fields/pickers';
import {
  ITEM_OUTPUT_FIELDS,
  ITEM_SAMPLE,
  customInputFieldsOfChosenPipeline,
  customOutputFields,
  pipelineInputField,
  stageInputField,
  statusInputField,
} from '../fields/item-fields';

/**
 * Builds the update body: only provided fields; `pipeline_id` only drives dropdowns and custom fields and is never
 * sent (an item stays in its pipeline). Custom values need the pipeline to know their types.
 */
export async function itemUpdateBody(z: ZObject, inputData: Readonly<Record<string, unknown>>): Promise<ItemUpdate> {
  let metadata: Record<string, unknown> | undefined;
  if (hasCustomValues(inputData)) {
    const pipelineId = toId(inputData.pipeline_id, 'Pipeline');
    if (pipelineId === undefined) {
      throw invalidInput("Choose the item's Pipeline to update custom fields: their types come from the pipeline.");
    }
    metadata = collectMetadata(inputData, await fetchCustomFields(z, pipelineId), 'update');
  }
  const body = definedOnly({
    name: toText(inputData.name, 'Name'),
    stage_id: toId(inputData.stage_id, 'Stage'),
    status_id: toId(inputData.status_id, 'Status'),
    version: toInteger(inputData.version, 'Version'),
    contact_id: toId(inputData.contact_id, 'Contact ID'),
    metadata,
  });
  return checkedBody(ItemUpdateSchema, body, 'item update');
}

/** Updates the item `item_id` with the provided fields; returns it with `id`. 409 (version conflict) via middleware.ts. */
export async function perform(z: ZObject, bundle: Bundle): Promise<ZapierItem> {
  const itemId = requireId(bundle.inputData.item_id, 'Item ID');
  const body = await itemUpdateBody(z, bundle.inputData);
  return withItemId(await sendJson<Item>(z, 'PATCH', apiPath('items', itemId), body));
}

export default defineCreate({
  key: 'update_item',
  noun: 'Item',
  display: {
    label: 'Update Item',
    description: 'Updates an item in Stageline: moves it to another stage or status, renames it or changes custom fields.',
  },
  operation: {
    inputFields: [
      itemInputField({
        required: true,
        helpText: 'The item to update: choose it by short ID and name, or map the Item ID from a Stageline trigger, search or action step.',
      }),
      pipelineInputField({
        required: false,
        helpText:
          "The item's pipeline. Choose it to pick the stage and status from lists and to show its custom fields; it is not changed (items stay in their pipeline).",
      }),
      stageInputField({ required: false, helpText: 'Move the item to this stage. Leave empty to keep the current stage.' }),
      statusInputField('Set this status. Leave empty to keep the current one (after a stage move: the new stage\'s first status).'),
      { key: 'name', label: 'Name', type: 'string', required: false, helpText: 'New name. Leave empty to keep the current name.' },
      {
        key: 'contact_id',
        label: 'Contact ID',
        type: 'string',
        required: false,
        helpText: 'New contact identifier. Leave empty to keep the current one.',
      },
      {
        key: 'version',
        label: 'Version',
        type: 'integer',
        required: false,
        helpText:
          "Optimistic locking: map the item's Version from the step that read it. If someone changed the item since, Stageline refuses the update instead of overwriting their change. Leave empty to update regardless.",
      },
      customInputFieldsOfChosenPipeline('update'),
    ],
    perform,
    sample: ITEM_SAMPLE,
    outputFields: [...ITEM_OUTPUT_FIELDS, customOutputFields],
  },
});

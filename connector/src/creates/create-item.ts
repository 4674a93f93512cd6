/**
 * Create `create_item` ("Create Item"): POST /v1/ext/items (spec "Items", create body; CONTRACT "Responses": 201 with
 * the full Item). Custom fields come from the chosen pipeline's blueprint and travel in `metadata`; `source` is
 * `zapier`.
 */
import { defineCreate, type Bundle, type InputField, type ZObject } from 'zapier-platform-core';
import { ItemCreateSchema, type Item, type ItemCreate } from '@stageline/shared';
import { apiPath, createJson, fetchCustomFields, withItemId, type ZapierItem } from '../client';
import { checkedBody, definedOnly, requireId, toId, toText } from '../fields/coerce';
import { collectMetadata, hasCustomValues } from '../fields/custom-fields';
import { idempotencyKeyFor, idempotencyKeyInputField } from '../idempotency';
import {
  ITEM_OUTPUT_FIELDS,
  ITEM_SAMPLE,
  customInputFieldsOfChosenPipeline,
  customOutputFields,
  pipelineInputField,
  stageInputField,
  statusInputField,
} from '../fields/item-fields';

/** The `source` the connector records on the items it creates (CONTRACT "Responses"). */
export const ZAPIER_SOURCE = 'zapier';

/**
 * Builds the create body from the step's input: ids trimmed, blanks left out, custom values coerced and checked
 * against the pipeline's blueprint (fetched only when custom values were given), then the whole body checked with
 * the contract's ItemCreateSchema.
 */
export async function itemCreateBody(z: ZObject, inputData: Readonly<Record<string, unknown>>): Promise<ItemCreate> {
  const pipelineId = requireId(inputData.pipeline_id, 'Pipeline');
  const fields = hasCustomValues(inputData) ? await fetchCustomFields(z, pipelineId) : [];
  const body = definedOnly({
    name: toText(inputData.name, 'Name'),
    pipeline_id: pipelineId,
    stage_id: toId(inputData.stage_id, 'Stage'),
    status_id: toId(inputData.status_id, 'Status'),
    contact_id: toId(inputData.contact_id, 'Contact ID'),
    source: ZAPIER_SOURCE,
    metadata: collectMetadata(inputData, fields, 'create'),
  });
  return checkedBody(ItemCreateSchema, body, 'item');
}

/** The operation key; also part of the Idempotency-Key derivation (idempotency.ts). */
export const CREATE_ITEM_KEY = 'create_item';

/**
 * Creates the item with an Idempotency-Key derived from the Zap, this action, the body and the optional override
 * (idempotency.ts), so a retry of the step returns the first item instead of a second one. Returns it with
 * `id` = `item_id`. Errors: InvalidData (checked locally), 4xx via middleware.ts (409 `idempotency_key_in_use` as
 * a ThrottledError Zapier retries).
 */
export async function perform(z: ZObject, bundle: Bundle): Promise<ZapierItem> {
  const body = await itemCreateBody(z, bundle.inputData);
  const key = idempotencyKeyFor(bundle, CREATE_ITEM_KEY, body);
  return withItemId(await createJson<Item>(z, apiPath('items'), body, key));
}

/** The inputs of Create Item (and of Create or Update Item): pipeline, stage, status, name, contact, custom fields, key. */
export const CREATE_ITEM_INPUT_FIELDS: InputField[] = [
  pipelineInputField({ required: true, helpText: 'The pipeline the item goes into. Its custom fields appear below once chosen.' }),
  stageInputField({ required: true, helpText: 'The stage of that pipeline the item starts in.' }),
  statusInputField("The item's status in that stage. Leave empty for the stage's first status."),
  { key: 'name', label: 'Name', type: 'string', required: true, helpText: 'Name of the item, e.g. the deal or request (up to 255 characters).' },
  {
    key: 'contact_id',
    label: 'Contact ID',
    type: 'string',
    required: false,
    helpText: 'Identifier of the contact this item is about, e.g. the ID from your CRM.',
  },
  customInputFieldsOfChosenPipeline('create'),
  idempotencyKeyInputField,
];

export default defineCreate({
  key: CREATE_ITEM_KEY,
  noun: 'Item',
  display: {
    label: 'Create Item',
    description: 'Creates an item in a stage of a Stageline pipeline, with its custom fields.',
  },
  operation: {
    inputFields: CREATE_ITEM_INPUT_FIELDS,
    perform,
    sample: ITEM_SAMPLE,
    outputFields: [...ITEM_OUTPUT_FIELDS, customOutputFields],
  },
});

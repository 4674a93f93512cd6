/**
 * Search `find_duplicate_items` ("Find Duplicate Items"): POST /v1/ext/items/check-duplicates (CONTRACT "Duplicate
 * check": the pipeline's duplicate-detection configuration decides which fields are compared; 200 with matching
 * Items, best first, each with `matched_on`). Paired with `create_item` as a search-or-create.
 */
import { defineSearch, type Bundle, type ZObject } from 'zapier-platform-core';
import { DuplicateCheckSchema, type DuplicateMatch } from '@stageline/shared';
import { apiPath, fetchCustomFields, sendJson, withItemId, type ZapierItem } from '../client';
import { checkedBody, definedOnly, requireId, toId, toText } from '../fields/coerce';
import { collectMetadata, hasCustomValues } from '../fields/custom-fields';
import {
  DUPLICATE_MATCH_SAMPLE,
  ITEM_OUTPUT_FIELDS,
  MATCHED_ON_OUTPUT_FIELD,
  customInputFieldsOfChosenPipeline,
  customOutputFields,
  pipelineInputField,
} from '../fields/item-fields';

/** The duplicates of the given values in the chosen pipeline, best first, each with `id` = `item_id`; [] when none. */
export async function perform(z: ZObject, bundle: Bundle): Promise<ZapierItem<DuplicateMatch>[]> {
  const pipelineId = requireId(bundle.inputData.pipeline_id, 'Pipeline');
  const fields = hasCustomValues(bundle.inputData) ? await fetchCustomFields(z, pipelineId) : [];
  const body = checkedBody(
    DuplicateCheckSchema,
    definedOnly({
      pipeline_id: pipelineId,
      name: toText(bundle.inputData.name, 'Name'),
      contact_id: toId(bundle.inputData.contact_id, 'Contact ID'),
      metadata: collectMetadata(bundle.inputData, fields, 'search'),
    }),
    'duplicate check',
  );
  const matches = await sendJson<DuplicateMatch[]>(z, 'POST', apiPath('items', 'check-duplicates'), body);
  return matches.map(withItemId);
}

export default defineSearch({
  key: 'find_duplicate_items',
  noun: 'Item',
  display: {
    label: 'Find Duplicate Items',
    description:
      "Finds items that duplicate the values you give, using the pipeline's duplicate detection (e.g. the same email). Returns the best match.",
  },
  operation: {
    inputFields: [
      pipelineInputField({
        required: true,
        helpText: 'The pipeline to search. Its duplicate-detection settings decide which fields are compared.',
      }),
      { key: 'name', label: 'Name', type: 'string', required: false, helpText: 'The item name to compare (if the pipeline compares names).' },
      {
        key: 'contact_id',
        label: 'Contact ID',
        type: 'string',
        required: false,
        helpText: 'The contact identifier to compare (if the pipeline compares it).',
      },
      customInputFieldsOfChosenPipeline('search'),
    ],
    perform,
    sample: DUPLICATE_MATCH_SAMPLE,
    outputFields: [...ITEM_OUTPUT_FIELDS, MATCHED_ON_OUTPUT_FIELD, customOutputFields],
  },
});

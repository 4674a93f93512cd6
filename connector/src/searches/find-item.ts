/**
 * Search `find_item` ("Find Item"): an item by its ID (GET /v1/ext/items/{item_id}), by short ID
 * (GET /v1/ext/items?short_id=) or by name (GET /v1/ext/items?name=), optionally within a pipeline (`pipeline_id`);
 * the list filters are CONTRACT "Lists" (exact, case-insensitive; the name trimmed). Given together, the criteria
 * must all match. No match is an empty result (Zapier then reports "nothing found" or, as "Find or Create Item",
 * creates the item); results are full Items (every built-in field and the custom fields), newest first, each with
 * `id` = `item_id`. Paired with Create Item (search-or-create) and, when found, Update Item.
 */
import { defineSearch, type Bundle, type ZObject } from 'zapier-platform-core';
import type { Item } from '@stageline/shared';
import { apiPath, callApi, getJson, withItemId, type ZapierItem } from '../client';
import { invalidInput, toId, toText } from '../fields/coerce';
import { ITEM_OUTPUT_FIELDS, ITEM_SAMPLE, customOutputFields, pipelineInputField } from '../fields/item-fields';
import { itemInputField } from '../fields/pickers';
import { throwForProblem } from '../middleware';

/** The most matches one search returns (one page; Zapier uses the first, newest, match). */
export const FIND_ITEM_LIMIT = 25;

/** What the step searches by. */
interface ItemCriteria {
  itemId?: string | undefined;
  shortId?: string | undefined;
  name?: string | undefined;
  pipelineId?: string | undefined;
}

/** Whether `item` satisfies the criteria besides its ID (the way the list filters compare). */
function matches(item: Item, c: ItemCriteria): boolean {
  const same = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase();
  return (
    (c.shortId === undefined || same(item.short_id, c.shortId)) &&
    (c.name === undefined || same(item.name, c.name)) &&
    (c.pipelineId === undefined || item.pipeline_id === c.pipelineId)
  );
}

/**
 * The items matching the step's criteria, newest first, each with `id`; [] when none.
 * @throws an input error when no criterion is given; the API's errors (middleware.ts) otherwise, except that an
 *   unknown item ID (404) is "not found", not an error.
 */
export async function perform(z: ZObject, bundle: Bundle): Promise<ZapierItem[]> {
  const criteria: ItemCriteria = {
    itemId: toId(bundle.inputData.item_id, 'Item'),
    shortId: toId(bundle.inputData.short_id, 'Short ID'),
    name: toText(bundle.inputData.name, 'Name')?.trim() || undefined,
    pipelineId: toId(bundle.inputData.pipeline_id, 'Pipeline'),
  };
  if (criteria.itemId === undefined && criteria.shortId === undefined && criteria.name === undefined) {
    throw invalidInput('Give an Item (ID), a Short ID such as SALES-42, or a Name to search by.');
  }
  if (criteria.itemId !== undefined) {
    const response = await callApi<Item>(z, { url: apiPath('items', criteria.itemId), skipThrowForStatus: true });
    if (response.status === 404) return [];
    if (response.status >= 400) throwForProblem(z, response);
    return matches(response.data, criteria) ? [withItemId(response.data)] : [];
  }
  const found = await getJson<Item[]>(z, apiPath('items'), {
    short_id: criteria.shortId,
    name: criteria.name,
    pipeline_id: criteria.pipelineId,
    limit: FIND_ITEM_LIMIT,
  });
  return found.map(withItemId);
}

export default defineSearch({
  key: 'find_item',
  noun: 'Item',
  display: {
    label: 'Find Item',
    description: 'Finds an item by its ID, its short ID (such as SALES-42) or its exact name, optionally within one pipeline.',
  },
  operation: {
    inputFields: [
      itemInputField({
        required: false,
        searchable: false,
        helpText: 'Find this item: choose it, or map an Item ID from an earlier step.',
      }),
      {
        key: 'short_id',
        label: 'Short ID',
        type: 'string',
        required: false,
        helpText: 'The short ID shown in Stageline, such as `SALES-42` (upper or lower case).',
      },
      {
        key: 'name',
        label: 'Name',
        type: 'string',
        required: false,
        helpText: 'The exact item name (upper or lower case and surrounding spaces do not matter). The newest item of that name is used.',
      },
      pipelineInputField({
        required: false,
        helpText: 'Only find items of this pipeline. Choosing it also lists its custom fields for later steps.',
      }),
    ],
    perform,
    sample: ITEM_SAMPLE,
    outputFields: [...ITEM_OUTPUT_FIELDS, customOutputFields],
  },
});

/**
 * Hidden trigger `item_list`: the item picker behind every Item input (`dynamic: 'item_list.id.label'`): Update
 * Item, Create Task, Update Task, Find Item and Find Task. Spec "Items": GET /v1/ext/items, newest first, filtered
 * by the step's chosen Pipeline when there is one (CONTRACT "Lists": `pipeline_id`); Zapier pages through it with
 * `canPaginate` over the API's keyset cursor (client.ts `getPickerPage`), so a company with 100k items can reach
 * every one. Each choice is labelled "SHORT-ID name", e.g. "SALES-42 Acme Corp: 50 seats".
 */
import { defineTrigger, type Bundle, type ZObject } from 'zapier-platform-core';
import type { Item } from '@stageline/shared';
import { apiPath, getPickerPage } from '../client';
import { chosenId } from '../fields/coerce';

/** One choice of the item picker. */
export interface ItemChoice {
  /** The item id (what the dropdown puts into the field). */
  id: string;
  /** What the dropdown shows: short ID and name. */
  label: string;
  short_id: string;
  name: string;
  pipeline: string;
  stage: string;
}

/** An item as a picker choice. */
export function itemChoice(item: Item): ItemChoice {
  return { id: item.item_id, label: `${item.short_id} ${item.name}`, short_id: item.short_id, name: item.name, pipeline: item.pipeline, stage: item.stage };
}

/** One page (bundle.meta.page) of the company's items, newest first, of the chosen pipeline if any. */
export async function listItemChoices(z: ZObject, bundle: Bundle): Promise<ItemChoice[]> {
  const pipelineId = chosenId(bundle.inputData?.pipeline_id);
  const items = await getPickerPage<Item>(z, bundle, apiPath('items'), { pipeline_id: pipelineId });
  return items.map(itemChoice);
}

export default defineTrigger({
  key: 'item_list',
  noun: 'Item',
  display: {
    label: 'List Items',
    description: 'Lists items, newest first, for the item dropdowns.',
    hidden: true,
  },
  operation: {
    type: 'polling',
    canPaginate: true,
    perform: listItemChoices,
    sample: {
      id: '5f0c6a53-8a2e-4b7e-9a51-2f1d0e6c4b11',
      label: 'SALES-42 Acme Corp: 50 seats',
      short_id: 'SALES-42',
      name: 'Acme Corp: 50 seats',
      pipeline: 'Sales',
      stage: 'Qualified',
    },
    outputFields: [
      { key: 'id', label: 'Item ID', type: 'string' },
      { key: 'label', label: 'Short ID and Name', type: 'string' },
      { key: 'short_id', label: 'Short ID', type: 'string' },
      { key: 'name', label: 'Name', type: 'string' },
      { key: 'pipeline', label: 'Pipeline', type: 'string' },
      { key: 'stage', label: 'Stage', type: 'string' },
    ],
  },
});

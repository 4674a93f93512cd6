/**
 * Create `upsert_item` ("Create or Update Item"): POST /v1/ext/items/upsert (CONTRACT "Upsert (create or update,
 * atomically)"). The body is the create body (same inputs as Create Item, custom fields from the pipeline's
 * blueprint); the pipeline's duplicate-detection rule finds the item to update, atomically, so a Zap that runs twice
 * for one contact never makes two items. Output: the item (`id` = `item_id`) plus `upsert_result` = `created`,
 * `updated` or `unchanged` (the `Stageline-Upsert` header).
 *
 * Errors (middleware.ts / problem-messages.ts): 409 `ambiguous_match` (several items match: the message lists them),
 * 422 `upsert_unavailable` (the pipeline has no duplicate detection, or the step fills none of its fields).
 */
import { defineCreate, type Bundle, type ZObject } from 'zapier-platform-core';
import { UPSERT_RESULTS, UPSERT_RESULT_HEADER, type Item, type UpsertResult } from '@stageline/shared';
import { apiPath, postWithKey, withItemId, type ZapierItem } from '../client';
import { idempotencyKeyFor } from '../idempotency';
import { ITEM_OUTPUT_FIELDS, ITEM_SAMPLE, customOutputFields } from '../fields/item-fields';
import { CREATE_ITEM_INPUT_FIELDS, itemCreateBody } from './create-item';

/** The operation key; also part of the Idempotency-Key derivation (idempotency.ts). */
export const UPSERT_ITEM_KEY = 'upsert_item';

/** The output member naming what the upsert did. */
export const UPSERT_RESULT_FIELD = 'upsert_result';

/** An upserted item as output: the item with `id`, and what the upsert did. */
export type UpsertedItem = ZapierItem & { [UPSERT_RESULT_FIELD]: UpsertResult };

/**
 * What the upsert did: the `Stageline-Upsert` header; without one (a proxy dropped it), `created` for 201 and
 * `updated` otherwise (the body cannot tell `updated` from `unchanged`).
 */
export function upsertResultOf(status: number, header: string | undefined | null): UpsertResult {
  const value = header?.trim().toLowerCase();
  if ((UPSERT_RESULTS as readonly string[]).includes(value ?? '')) return value as UpsertResult;
  return status === 201 ? 'created' : 'updated';
}

/**
 * Creates or updates the item with an Idempotency-Key derived as Create Item's (action `upsert_item`), so a retry of
 * the step returns the first answer. Errors: InvalidData (checked locally), 4xx via middleware.ts.
 */
export async function perform(z: ZObject, bundle: Bundle): Promise<UpsertedItem> {
  const body = await itemCreateBody(z, bundle.inputData);
  const key = idempotencyKeyFor(bundle, UPSERT_ITEM_KEY, body);
  const response = await postWithKey<Item>(z, apiPath('items', 'upsert'), body, key);
  return { ...withItemId(response.data), [UPSERT_RESULT_FIELD]: upsertResultOf(response.status, response.getHeader(UPSERT_RESULT_HEADER)) };
}

export default defineCreate({
  key: UPSERT_ITEM_KEY,
  noun: 'Item',
  display: {
    label: 'Create or Update Item',
    description:
      "Creates an item, or updates the one that matches it under the pipeline's duplicate rules (e.g. the same email), in one step.",
  },
  operation: {
    inputFields: CREATE_ITEM_INPUT_FIELDS,
    perform,
    sample: { ...ITEM_SAMPLE, [UPSERT_RESULT_FIELD]: 'updated' },
    outputFields: [
      ...ITEM_OUTPUT_FIELDS,
      { key: UPSERT_RESULT_FIELD, label: 'Result (created, updated or unchanged)', type: 'string' },
      customOutputFields,
    ],
  },
});

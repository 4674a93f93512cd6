/**
 * Create `delete_item` ("Delete Item"): DELETE /v1/ext/items/{item_id}[?version=] (CONTRACT "Item deletion and
 * erasure"; 204 without a body). Deletion is final: Stageline erases the item's values, unlinks its tasks and sends
 * `item.deleted`. Output: `{ id, item_id, deleted: true }` (the API returns no body).
 *
 * A 404 (already deleted, a wrong ID, or another company's item) and a 409 (the optional Version no longer matches)
 * get messages that say what happened and what to do; other errors go through problem-messages.ts.
 */
import { defineCreate, type Bundle, type ZObject } from 'zapier-platform-core';
import { ProblemSchema } from '@stageline/shared';
import { apiPath, callApi, responseRequestId } from '../client';
import { requireId, toInteger } from '../fields/coerce';
import { itemInputField } from '../fields/pickers';
import { throwForProblem } from '../middleware';
import { withRequestId } from '../problem-messages';

/** The operation's output: the id of the item deleted. */
export interface DeletedItem {
  id: string;
  item_id: string;
  deleted: true;
}

/** The message of a 404 to a delete: the item is gone already or never was this company's. */
export function itemNotFoundMessage(itemId: string): string {
  return (
    `Stageline has no item ${itemId}: it was deleted already, or the ID is wrong or belongs to another company's account. ` +
    'Nothing was deleted. Map the Item ID from a step that reads the item (a Stageline trigger or Find Item).'
  );
}

/** The message of a 409 to a delete with a Version: the item changed since it was read, so it was kept. */
export function versionConflictMessage(currentVersion: number | undefined): string {
  const now = currentVersion === undefined ? 'a newer version' : `version ${currentVersion}`;
  return (
    `The item was not deleted: it changed since it was read (Stageline now has ${now}, this step sent another Version). ` +
    'Map the Version from a step that reads the item right before this one, or leave Version empty to delete it regardless.'
  );
}

/**
 * Deletes the item `item_id` (with `version` when given). @throws z.errors.Error `not_found` (404) or
 * `version_conflict` (409) with the messages above (ending with `(request <id>)`); InvalidData for a blank Item or a Version that is no whole
 * number; other statuses as middleware.ts does.
 */
export async function perform(z: ZObject, bundle: Bundle): Promise<DeletedItem> {
  const itemId = requireId(bundle.inputData.item_id, 'Item');
  const version = toInteger(bundle.inputData.version, 'Version');
  const response = await callApi(z, { method: 'DELETE', url: apiPath('items', itemId), params: { version }, skipThrowForStatus: true });
  if (response.status === 404) throw new z.errors.Error(withRequestId(itemNotFoundMessage(itemId), responseRequestId(response)), 'not_found', 404);
  if (response.status === 409) {
    const problem = ProblemSchema.safeParse(response.data);
    const message = versionConflictMessage(problem.success ? problem.data.current_version : undefined);
    throw new z.errors.Error(withRequestId(message, responseRequestId(response)), 'version_conflict', 409);
  }
  if (response.status >= 400) throwForProblem(z, response);
  return { id: itemId, item_id: itemId, deleted: true };
}

export default defineCreate({
  key: 'delete_item',
  noun: 'Item',
  display: {
    label: 'Delete Item',
    description: "Deletes an item in Stageline for good (its values are erased; its tasks stay, no longer linked to it).",
  },
  operation: {
    inputFields: [
      itemInputField({
        required: true,
        helpText: 'The item to delete: choose it by short ID and name, or map the Item ID from a Stageline trigger, search or action step.',
      }),
      {
        key: 'version',
        label: 'Version',
        type: 'integer',
        required: false,
        helpText:
          "Optimistic locking: map the item's Version from the step that read it. If someone changed the item since, Stageline keeps it instead of deleting their change. Leave empty to delete regardless.",
      },
    ],
    perform,
    sample: { id: '5f0c6a53-8a2e-4b7e-9a51-2f1d0e6c4b11', item_id: '5f0c6a53-8a2e-4b7e-9a51-2f1d0e6c4b11', deleted: true },
    outputFields: [
      { key: 'id', label: 'ID (same as Item ID)', type: 'string' },
      { key: 'item_id', label: 'Item ID', type: 'string' },
      { key: 'deleted', label: 'Deleted', type: 'boolean' },
    ],
  },
});

/**
 * The `note` operations (CONTRACT "Notes", "Lists", "Idempotency"): create (POST /v1/ext/notes with an
 * Idempotency-Key), get, getMany (filters, Return All or Limit, paging by Link rel="next"), update (PATCH with an
 * optional version) and delete (DELETE with an optional `?version=`; outputs `{ note_id, deleted: true }`).
 */
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import type { Note, NoteCreate, NoteUpdate } from '@stageline/shared';
import { apiPath } from '../../shared/server-url';
import { apiJson, apiRequest, compact, listAll } from '../../shared/transport';
import { NOTE_CREATE_FIELDS, NOTE_DELETE_QUERY, NOTE_LIST_FILTERS, NOTE_UPDATE_FIELDS, toContract } from '../descriptions/contract-keys';
import { toOffsetDateTime } from './date-time';
import { createWithKey } from './idempotency-key';
import { pickedValue } from './picker-value';
import { requireChanges } from './require-changes';
import type { OperationHandlers } from './types';

/** The note id at `itemIndex`. */
function noteIdAt(context: IExecuteFunctions, itemIndex: number): string {
	return String(context.getNodeParameter('noteId', itemIndex, '')).trim();
}

export const noteHandlers: OperationHandlers = {
	async create(this: IExecuteFunctions, itemIndex: number): Promise<object> {
		const values: IDataObject = {
			itemId: String(this.getNodeParameter('itemId', itemIndex, '', { extractValue: true })).trim(),
			body: this.getNodeParameter('body', itemIndex),
			...(this.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject),
		};
		const body = toContract(NOTE_CREATE_FIELDS, values) as NoteCreate;
		return createWithKey<Note>(this, apiPath('notes'), body, 'note:create', itemIndex);
	},

	async get(this: IExecuteFunctions, itemIndex: number): Promise<object> {
		return apiJson<Note>(this, { url: apiPath('notes', noteIdAt(this, itemIndex)), itemIndex });
	},

	async getMany(this: IExecuteFunctions, itemIndex: number): Promise<object[]> {
		const filters = { ...(this.getNodeParameter('filters', itemIndex, {}) as IDataObject) };
		filters.itemId = pickedValue(filters.itemId) as IDataObject[string];
		filters.updatedAfter = toOffsetDateTime(filters.updatedAfter, this.getTimezone());
		const returnAll = this.getNodeParameter('returnAll', itemIndex, false) as boolean;
		const limit = returnAll ? undefined : (this.getNodeParameter('limit', itemIndex, 50) as number);
		const qs = compact(toContract(NOTE_LIST_FILTERS, filters) as IDataObject);
		return listAll<Note>(this, { url: apiPath('notes'), qs, itemIndex }, limit);
	},

	async update(this: IExecuteFunctions, itemIndex: number): Promise<object> {
		const fields = this.getNodeParameter('updateFields', itemIndex, {}) as IDataObject;
		const body = toContract(NOTE_UPDATE_FIELDS, fields) as NoteUpdate;
		requireChanges(this, body, itemIndex);
		const url = apiPath('notes', noteIdAt(this, itemIndex));
		return apiJson<Note>(this, { method: 'PATCH', url, body: body as IDataObject, itemIndex });
	},

	/** `{ note_id, deleted: true }` (the API answers 204 without a body); 404 and 409 as the transport explains them. */
	async delete(this: IExecuteFunctions, itemIndex: number): Promise<object> {
		const noteId = noteIdAt(this, itemIndex);
		const options = this.getNodeParameter('deleteOptions', itemIndex, {}) as IDataObject;
		const qs = compact(toContract(NOTE_DELETE_QUERY, options) as IDataObject);
		await apiRequest(this, { method: 'DELETE', url: apiPath('notes', noteId), qs, itemIndex });
		return { note_id: noteId, deleted: true };
	},
};

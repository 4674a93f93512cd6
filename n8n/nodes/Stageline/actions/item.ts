/**
 * The `item` operations (spec "Items"; CONTRACT "Lists", "Duplicate check", "Idempotency"):
 * create (POST /v1/ext/items with an Idempotency-Key), update (PATCH), get, getMany (filters, Return All or Limit,
 * paging by Link rel="next"), find (by short ID or exact name, as the Zapier connector's Find Item; an empty value is
 * refused), checkDuplicates (POST /v1/ext/items/check-duplicates; one summary item per input item), delete
 * (DELETE /v1/ext/items/{item_id}, CONTRACT "Item deletion and erasure") and upsert (POST /v1/ext/items/upsert with
 * an Idempotency-Key, CONTRACT "Upsert").
 */
import { NodeOperationError, type IDataObject, type IExecuteFunctions } from 'n8n-workflow';
import type { DuplicateCheck, DuplicateMatch, Item, ItemCreate, ItemUpdate, ItemUpsert } from '@stageline/shared';
import { apiPath } from '../../shared/server-url';
import { apiJson, apiRequest, compact, listAll } from '../../shared/transport';
import {
	DUPLICATE_CHECK_FIELDS,
	ITEM_CREATE_FIELDS,
	ITEM_DELETE_QUERY,
	ITEM_LIST_FILTERS,
	ITEM_UPDATE_FIELDS,
	UPSERT_RESULTS,
	UPSERT_RESULT_HEADER,
	toContract,
} from '../descriptions/contract-keys';
import { customFieldValues } from './custom-fields';
import { toOffsetDateTime } from './date-time';
import { createWithKey, postWithKey } from './idempotency-key';
import { requireChanges } from './require-changes';
import type { OperationHandlers } from './types';

/** CONTRACT "Responses": the `source` of items this node creates unless Additional Fields sets one (Zapier sends `zapier`). */
export const DEFAULT_SOURCE = 'n8n';

/** The most matches Find returns (one page, newest first), as the Zapier connector's Find Item. */
export const FIND_ITEM_LIMIT = 25;

/** The item id of the picker at `itemIndex`. */
function itemIdAt(context: IExecuteFunctions, itemIndex: number): string {
	return String(context.getNodeParameter('itemId', itemIndex, '', { extractValue: true })).trim();
}

/** The create, duplicate-check or update body shared parts: top-level values, the collection, the custom fields. */
async function bodyOf(
	context: IExecuteFunctions,
	itemIndex: number,
	map: Readonly<Record<string, string>>,
	values: IDataObject,
	pipelineOf: () => Promise<string>,
): Promise<object> {
	const metadata = await customFieldValues(context, itemIndex, pipelineOf);
	return toContract(map, { ...values, customFields: metadata }) as IDataObject;
}

/** The output member naming what an upsert did (`created`, `updated` or `unchanged`). */
export const UPSERT_RESULT_FIELD = 'upsert_result';

/**
 * What an upsert did: the `Stageline-Upsert` header; without one (a proxy dropped it), `created` for 201 and `updated`
 * otherwise (the body cannot tell `updated` from `unchanged`).
 */
export function upsertResultOf(status: number, header: string | undefined): string {
	const value = header?.trim().toLowerCase() ?? '';
	if ((UPSERT_RESULTS as readonly string[]).includes(value)) return value;
	return status === 201 ? 'created' : 'updated';
}

/** The create (and upsert) body of the input item at `itemIndex`: pipeline, stage, status, name, additional and custom fields. */
export async function createBodyAt(context: IExecuteFunctions, itemIndex: number): Promise<ItemCreate> {
	const pipelineId = context.getNodeParameter('pipelineId', itemIndex) as string;
	const additional = context.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;
	const values: IDataObject = {
		pipelineId,
		stageId: context.getNodeParameter('stageId', itemIndex),
		statusId: context.getNodeParameter('statusId', itemIndex, ''),
		name: context.getNodeParameter('name', itemIndex),
		...additional,
		// an added but emptied Source keeps the default
		source: typeof additional.source === 'string' && additional.source.trim() !== '' ? additional.source.trim() : DEFAULT_SOURCE,
	};
	return (await bodyOf(context, itemIndex, ITEM_CREATE_FIELDS, values, async () => pipelineId)) as ItemCreate;
}

/**
 * The item and the PATCH body of the update of the input item at `itemIndex` (custom fields typed by the item's
 * pipeline, read with one GET when a custom field is set).
 * @throws NodeOperationError when nothing would change; NodeApiError when the item cannot be read.
 */
export async function updateAt(context: IExecuteFunctions, itemIndex: number): Promise<{ itemId: string; body: ItemUpdate }> {
	const itemId = itemIdAt(context, itemIndex);
	const fields = context.getNodeParameter('updateFields', itemIndex, {}) as IDataObject;
	const pipelineOf = async () => (await apiJson<Item>(context, { url: apiPath('items', itemId), itemIndex })).pipeline_id;
	const body = (await bodyOf(context, itemIndex, ITEM_UPDATE_FIELDS, fields, pipelineOf)) as ItemUpdate;
	requireChanges(context, body, itemIndex);
	return { itemId, body };
}

export const itemHandlers: OperationHandlers = {
	async create(this: IExecuteFunctions, itemIndex: number): Promise<object> {
		return createWithKey<Item>(this, apiPath('items'), await createBodyAt(this, itemIndex), 'item:create', itemIndex);
	},

	/** The item created or updated, plus `upsert_result` (the `Stageline-Upsert` header). */
	async upsert(this: IExecuteFunctions, itemIndex: number): Promise<object> {
		const body: ItemUpsert = await createBodyAt(this, itemIndex);
		const response = await postWithKey<Item>(this, apiPath('items', 'upsert'), body, 'item:upsert', itemIndex);
		return { ...response.body, [UPSERT_RESULT_FIELD]: upsertResultOf(response.status, response.headers[UPSERT_RESULT_HEADER.toLowerCase()]) };
	},

	/** `{ item_id, deleted: true }` (the API answers 204 without a body); 404 and 409 as the transport explains them. */
	async delete(this: IExecuteFunctions, itemIndex: number): Promise<object> {
		const itemId = itemIdAt(this, itemIndex);
		const options = this.getNodeParameter('deleteOptions', itemIndex, {}) as IDataObject;
		const qs = compact(toContract(ITEM_DELETE_QUERY, options) as IDataObject);
		await apiRequest(this, { method: 'DELETE', url: apiPath('items', itemId), qs, itemIndex });
		return { item_id: itemId, deleted: true };
	},

	async update(this: IExecuteFunctions, itemIndex: number): Promise<object> {
		const { itemId, body } = await updateAt(this, itemIndex);
		return apiJson<Item>(this, { method: 'PATCH', url: apiPath('items', itemId), body: body as IDataObject, itemIndex });
	},

	async get(this: IExecuteFunctions, itemIndex: number): Promise<object> {
		return apiJson<Item>(this, { url: apiPath('items', itemIdAt(this, itemIndex)), itemIndex });
	},

	async getMany(this: IExecuteFunctions, itemIndex: number): Promise<object[]> {
		const filters = { ...(this.getNodeParameter('filters', itemIndex, {}) as IDataObject) };
		filters.createdAfter = toOffsetDateTime(filters.createdAfter, this.getTimezone());
		filters.updatedAfter = toOffsetDateTime(filters.updatedAfter, this.getTimezone());
		const returnAll = this.getNodeParameter('returnAll', itemIndex, false) as boolean;
		const limit = returnAll ? undefined : (this.getNodeParameter('limit', itemIndex, 50) as number);
		const qs = compact(toContract(ITEM_LIST_FILTERS, filters) as IDataObject);
		return listAll<Item>(this, { url: apiPath('items'), qs, itemIndex }, limit);
	},

	async find(this: IExecuteFunctions, itemIndex: number): Promise<object[]> {
		const by = this.getNodeParameter('findBy', itemIndex) as 'shortId' | 'name';
		const raw = this.getNodeParameter('findValue', itemIndex, '') as unknown;
		const value = raw === undefined || raw === null ? '' : String(raw).trim();
		if (value === '') {
			// an empty filter would list every item (as the Zapier connector's Find Item, refuse it)
			const what = by === 'shortId' ? 'short ID' : 'name';
			throw new NodeOperationError(this.getNode(), `Value is empty: enter the ${what} to find.`, {
				itemIndex,
				description: 'An expression that gives an empty value (e.g. a missing field of the input item) would otherwise match every item.',
			});
		}
		const pipelineId = this.getNodeParameter('findPipelineId', itemIndex, '') as string;
		const qs = compact(toContract(ITEM_LIST_FILTERS, { [by]: value, pipelineId }) as IDataObject);
		return listAll<Item>(this, { url: apiPath('items'), qs, itemIndex }, FIND_ITEM_LIMIT);
	},

	/** One output item per input item: `{ duplicates: DuplicateMatch[], count }` (count 0 when nothing matches). */
	async checkDuplicates(this: IExecuteFunctions, itemIndex: number): Promise<object> {
		const pipelineId = this.getNodeParameter('pipelineId', itemIndex) as string;
		const values: IDataObject = {
			pipelineId,
			name: this.getNodeParameter('name', itemIndex, ''),
			...(this.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject),
		};
		const body = (await bodyOf(this, itemIndex, DUPLICATE_CHECK_FIELDS, values, async () => pipelineId)) as DuplicateCheck;
		const url = apiPath('items', 'check-duplicates');
		const duplicates = await apiJson<DuplicateMatch[]>(this, { method: 'POST', url, body: body as IDataObject, itemIndex });
		return { duplicates, count: duplicates.length };
	},
};

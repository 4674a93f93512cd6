/**
 * The `item` operations (spec "Items"; CONTRACT "Lists", "Duplicate check", "Idempotency"):
 * create (POST /v1/ext/items with an Idempotency-Key), update (PATCH), get, getMany (filters, Return All or Limit,
 * paging by Link rel="next"), find (by short ID or exact name, as the Zapier connector's Find Item) and
 * checkDuplicates (POST /v1/ext/items/check-duplicates).
 */
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import type { DuplicateCheck, DuplicateMatch, Item, ItemCreate, ItemUpdate } from '@stageline/shared';
import { apiPath } from '../../shared/server-url';
import { apiJson, compact, listAll } from '../../shared/transport';
import {
	DUPLICATE_CHECK_FIELDS,
	ITEM_CREATE_FIELDS,
	ITEM_LIST_FILTERS,
	ITEM_UPDATE_FIELDS,
	toContract,
} from '../descriptions/contract-keys';
import { customFieldValues } from './custom-fields';
import { createWithKey } from './idempotency-key';
import type { OperationHandlers } from './types';

/** CONTRACT "Responses": the `source` of items this node creates unless Additional Fields sets one (Zapier sends `zapier`). */
export const DEFAULT_SOURCE = 'n8n';

/** The most matches Find returns (one page, newest first), as the Zapier connector's Find Item. */
export const FIND_ITEM_LIMIT = 25;

/** A date-time parameter as ISO 8601 text (n8n gives strings or luxon DateTimes). */
function isoParam(value: unknown): string | undefined {
	if (value === undefined || value === null || value === '') return undefined;
	if (typeof value === 'object' && typeof (value as { toISO?: unknown }).toISO === 'function') {
		return String((value as { toISO: () => string }).toISO());
	}
	return String(value);
}

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

export const itemHandlers: OperationHandlers = {
	async create(this: IExecuteFunctions, itemIndex: number): Promise<object> {
		const pipelineId = this.getNodeParameter('pipelineId', itemIndex) as string;
		const values: IDataObject = {
			pipelineId,
			stageId: this.getNodeParameter('stageId', itemIndex),
			statusId: this.getNodeParameter('statusId', itemIndex, ''),
			name: this.getNodeParameter('name', itemIndex),
			source: DEFAULT_SOURCE,
			...(this.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject),
		};
		const body = (await bodyOf(this, itemIndex, ITEM_CREATE_FIELDS, values, async () => pipelineId)) as ItemCreate;
		return createWithKey<Item>(this, apiPath('items'), body, 'item:create', itemIndex);
	},

	async update(this: IExecuteFunctions, itemIndex: number): Promise<object> {
		const itemId = itemIdAt(this, itemIndex);
		const fields = this.getNodeParameter('updateFields', itemIndex, {}) as IDataObject;
		const pipelineOf = async () => (await apiJson<Item>(this, { url: apiPath('items', itemId), itemIndex })).pipeline_id;
		const body = (await bodyOf(this, itemIndex, ITEM_UPDATE_FIELDS, fields, pipelineOf)) as ItemUpdate;
		return apiJson<Item>(this, { method: 'PATCH', url: apiPath('items', itemId), body: body as IDataObject, itemIndex });
	},

	async get(this: IExecuteFunctions, itemIndex: number): Promise<object> {
		return apiJson<Item>(this, { url: apiPath('items', itemIdAt(this, itemIndex)), itemIndex });
	},

	async getMany(this: IExecuteFunctions, itemIndex: number): Promise<object[]> {
		const filters = { ...(this.getNodeParameter('filters', itemIndex, {}) as IDataObject) };
		filters.createdAfter = isoParam(filters.createdAfter);
		filters.updatedAfter = isoParam(filters.updatedAfter);
		const returnAll = this.getNodeParameter('returnAll', itemIndex, false) as boolean;
		const limit = returnAll ? undefined : (this.getNodeParameter('limit', itemIndex, 50) as number);
		const qs = compact(toContract(ITEM_LIST_FILTERS, filters) as IDataObject);
		return listAll<Item>(this, { url: apiPath('items'), qs, itemIndex }, limit);
	},

	async find(this: IExecuteFunctions, itemIndex: number): Promise<object[]> {
		const by = this.getNodeParameter('findBy', itemIndex) as 'shortId' | 'name';
		const value = String(this.getNodeParameter('findValue', itemIndex)).trim();
		const pipelineId = this.getNodeParameter('findPipelineId', itemIndex, '') as string;
		const qs = compact(toContract(ITEM_LIST_FILTERS, { [by]: value, pipelineId }) as IDataObject);
		return listAll<Item>(this, { url: apiPath('items'), qs, itemIndex }, FIND_ITEM_LIMIT);
	},

	async checkDuplicates(this: IExecuteFunctions, itemIndex: number): Promise<object[]> {
		const pipelineId = this.getNodeParameter('pipelineId', itemIndex) as string;
		const values: IDataObject = {
			pipelineId,
			name: this.getNodeParameter('name', itemIndex, ''),
			...(this.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject),
		};
		const body = (await bodyOf(this, itemIndex, DUPLICATE_CHECK_FIELDS, values, async () => pipelineId)) as DuplicateCheck;
		const url = apiPath('items', 'check-duplicates');
		return apiJson<DuplicateMatch[]>(this, { method: 'POST', url, body: body as IDataObject, itemIndex });
	},
};

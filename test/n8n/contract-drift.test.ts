/**
 * Issue 18: "a test fails when the node's fields drift from the contract". The node builds bodies and queries only
 * through the maps of descriptions/contract-keys.ts; here their contract keys are compared with the zod schemas of
 * @stageline/shared, and their parameter names with the node's description, so a renamed or added contract field,
 * or a node parameter without a contract key, fails.
 */
import {
	API_BASE_PATH,
	API_KEY_HEADER,
	CUSTOM_FIELD_TYPES,
	DuplicateCheckSchema,
	IDEMPOTENCY_KEY_HEADER as SHARED_IDEMPOTENCY_HEADER,
	IDEMPOTENCY_KEY_TTL_SECONDS,
	ItemCreateSchema,
	ItemDeleteQuerySchema,
	ItemListQuerySchema,
	ItemUpsertSchema,
	ItemUpdateSchema,
	MAX_PAGE_LIMIT as SHARED_MAX_PAGE_LIMIT,
	TASK_PRIORITIES as SHARED_PRIORITIES,
	TASK_TYPES as SHARED_TYPES,
	TaskCreateSchema,
	TaskListQuerySchema,
	TaskUpdateSchema,
	isIdempotencyKey,
} from '@stageline/shared';
import type { INodeProperties } from 'n8n-workflow';
import { StagelineApi } from '../../n8n/credentials/StagelineApi.credentials';
import { Stageline } from '../../n8n/nodes/Stageline/Stageline.node';
import {
	DUPLICATE_CHECK_FIELDS,
	ITEM_CREATE_FIELDS,
	ITEM_DELETE_QUERY,
	ITEM_LIST_FILTERS,
	ITEM_UPDATE_FIELDS,
	TASK_LIST_FILTERS,
	TASK_PRIORITIES,
	TASK_TYPES,
	TASK_WRITE_FIELDS,
} from '../../n8n/nodes/Stageline/descriptions/contract-keys';
import { FIELD_TYPES } from '../../n8n/nodes/Stageline/methods/resourceMapping';
import { deriveIdempotencyKey } from '../../n8n/nodes/shared/idempotency';
import { IDEMPOTENCY_KEY_TTL_HOURS } from '../../n8n/nodes/shared/problem';
import { API_BASE_PATH as NODE_API_BASE_PATH } from '../../n8n/nodes/shared/server-url';
import { IDEMPOTENCY_KEY_HEADER, MAX_PAGE_LIMIT } from '../../n8n/nodes/shared/transport';

const PAGING = ['limit', 'cursor'];
/** Create parameters sent as headers, not body fields: the Idempotency-Key override. */
const HEADER_PARAMS = ['idempotencyKey'];
const bodyOptions = (names: string[]) => names.filter((n) => !HEADER_PARAMS.includes(n));
const sorted = (keys: Iterable<string>) => [...keys].sort();
const values = (map: Record<string, string>) => sorted(Object.values(map));

const properties = new Stageline().description.properties;

/** The parameters shown for `resource` and `operation`, with the options of their collections. */
function parametersOf(resource: string, operation: string): INodeProperties[] {
	return properties.filter((p) => {
		const show = p.displayOptions?.show;
		return show?.resource?.includes(resource) && show.operation?.includes(operation);
	});
}

/** The option names of the collection `name` for `resource` and `operation`. */
function collectionOptions(resource: string, operation: string, name: string): string[] {
	const collection = parametersOf(resource, operation).find((p) => p.name === name);
	return sorted(((collection?.options ?? []) as INodeProperties[]).map((o) => o.name));
}

describe('the node matches the contract (@stageline/shared)', () => {
	it('item list filters are every filter of GET /v1/ext/items', () => {
		expect(values(ITEM_LIST_FILTERS)).toEqual(sorted(Object.keys(ItemListQuerySchema.shape).filter((k) => !PAGING.includes(k))));
		expect(collectionOptions('item', 'getMany', 'filters')).toEqual(sorted(Object.keys(ITEM_LIST_FILTERS)));
	});

	it('item create parameters are the create body fields, named pipelineId, stageId, statusId, name', () => {
		expect(values(ITEM_CREATE_FIELDS)).toEqual(sorted(Object.keys(ItemCreateSchema.shape)));
		const names = parametersOf('item', 'create').map((p) => p.name);
		expect(names).toEqual(expect.arrayContaining(['pipelineId', 'stageId', 'statusId', 'name', 'customFields']));
		const given = sorted([...names.filter((n) => n in ITEM_CREATE_FIELDS), ...bodyOptions(collectionOptions('item', 'create', 'additionalFields'))]);
		expect(given).toEqual(sorted(Object.keys(ITEM_CREATE_FIELDS)));
	});

	it('item create or update (upsert) has exactly the create parameters, and its body is the upsert body', () => {
		expect(values(ITEM_CREATE_FIELDS)).toEqual(sorted(Object.keys(ItemUpsertSchema.shape)));
		const names = (operation: string) => parametersOf('item', operation).map((p) => p.name);
		expect(names('upsert')).toEqual(names('create'));
		expect(collectionOptions('item', 'upsert', 'additionalFields')).toEqual(collectionOptions('item', 'create', 'additionalFields'));
	});

	it('item delete options are the delete query parameters', () => {
		expect(values(ITEM_DELETE_QUERY)).toEqual(sorted(Object.keys(ItemDeleteQuerySchema.shape)));
		expect(collectionOptions('item', 'delete', 'deleteOptions')).toEqual(sorted(Object.keys(ITEM_DELETE_QUERY)));
	});

	it('item update fields are the update body fields', () => {
		expect(values(ITEM_UPDATE_FIELDS)).toEqual(sorted(Object.keys(ItemUpdateSchema.shape)));
		expect(sorted([...collectionOptions('item', 'update', 'updateFields'), 'customFields'])).toEqual(sorted(Object.keys(ITEM_UPDATE_FIELDS)));
	});

	it('duplicate check sends only fields of its body, including every compared one', () => {
		const body = Object.keys(DuplicateCheckSchema.shape);
		expect(values(DUPLICATE_CHECK_FIELDS).every((k) => body.includes(k))).toBe(true);
		expect(values(DUPLICATE_CHECK_FIELDS)).toEqual(expect.arrayContaining(['pipeline_id', 'name', 'metadata']));
	});

	it('task write fields are the create and update body fields; the filters are the task list filters', () => {
		expect(values(TASK_WRITE_FIELDS)).toEqual(sorted(Object.keys(TaskCreateSchema.shape)));
		expect(values(TASK_WRITE_FIELDS)).toEqual(sorted(Object.keys(TaskUpdateSchema.shape)));
		const create = sorted([...parametersOf('task', 'create').map((p) => p.name).filter((n) => n in TASK_WRITE_FIELDS), ...bodyOptions(collectionOptions('task', 'create', 'additionalFields'))]);
		expect(create).toEqual(sorted(Object.keys(TASK_WRITE_FIELDS)));
		expect(collectionOptions('task', 'update', 'updateFields')).toEqual(sorted(Object.keys(TASK_WRITE_FIELDS)));
		expect(values(TASK_LIST_FILTERS)).toEqual(sorted(Object.keys(TaskListQuerySchema.shape).filter((k) => !PAGING.includes(k))));
		expect(collectionOptions('task', 'getMany', 'filters')).toEqual(sorted(Object.keys(TASK_LIST_FILTERS)));
	});

	it('enumerations, field types, headers and limits are the contract\'s', () => {
		expect([...TASK_PRIORITIES]).toEqual([...SHARED_PRIORITIES]);
		expect([...TASK_TYPES]).toEqual([...SHARED_TYPES]);
		expect(sorted(Object.keys(FIELD_TYPES))).toEqual(sorted(CUSTOM_FIELD_TYPES));
		expect(NODE_API_BASE_PATH).toBe(API_BASE_PATH);
		expect(IDEMPOTENCY_KEY_HEADER).toBe(SHARED_IDEMPOTENCY_HEADER);
		expect(MAX_PAGE_LIMIT).toBe(SHARED_MAX_PAGE_LIMIT);
		expect(IDEMPOTENCY_KEY_TTL_HOURS * 3600).toBe(IDEMPOTENCY_KEY_TTL_SECONDS);
		expect(Object.keys(new StagelineApi().authenticate.properties.headers ?? {})).toEqual([API_KEY_HEADER]);
	});

	it('derived idempotency keys are valid Idempotency-Key values', () => {
		const key = deriveIdempotencyKey({ executionId: '42', workflowId: 'w', nodeId: 'n', operation: 'item:create', runIndex: 0, itemIndex: 0 });
		expect(isIdempotencyKey(key)).toBe(true);
		expect(key).toHaveLength(68);
		expect(collectionOptions('item', 'create', 'additionalFields')).toContain('idempotencyKey');
		expect(collectionOptions('task', 'create', 'additionalFields')).toContain('idempotencyKey');
	});
});

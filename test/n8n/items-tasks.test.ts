/**
 * Item and task operations, pickers and the custom-field resource mapper, run through n8n-core's executor
 * (WorkflowExecute) and LoadOptionsContext against a scripted Stageline: request paths, queries and bodies, the
 * Idempotency-Key, paging, errors as NodeApiError and Continue On Fail.
 */
import { loadOptionsContext, runStageline } from './helpers/engine';
import { batchAnswer, problem, startFakeStageline, type FakeStageline, type RecordedRequest } from './helpers/fake-stageline';
import { searchItems, searchTasks } from '../../n8n/nodes/Stageline/methods/listSearch';
import { getCustomFieldsForCreate, getCustomFieldsForUpdate } from '../../n8n/nodes/Stageline/methods/resourceMapping';
import { getStages } from '../../n8n/nodes/Stageline/methods/loadOptions';
import { ITEM } from './helpers/fixtures';

let api: FakeStageline;
const credential = () => ({ apiKey: 'sk_test', baseUrl: api.url });

const TASK = {
	task_id: 't1',
	title: 'Call Ada',
	description: null,
	due_at: '2026-03-01T09:00:00.000Z',
	priority: 'high',
	is_completed: false,
	task_type: 'call',
	assigned_to: 'maria@acme.example',
	created_by: 'key1',
	item_id: 'i1',
	completed_at: null,
	notes: null,
	duration_minutes: null,
	reminder_minutes: null,
	created_at: '2026-01-01T00:00:00.000Z',
	updated_at: '2026-01-01T00:00:00.000Z',
};
const FIELDS = [
	{ key: 'email', label: 'Email', type: 'email', required: true },
	{ key: 'deal_value', label: 'Deal value', type: 'number', required: false },
	{ key: 'close_date', label: 'Close date', type: 'date', required: false },
	{ key: 'tier', label: 'Tier', type: 'select', required: false, options: ['gold', 'silver'] },
	{ key: 'vip', label: 'VIP', type: 'boolean', required: false },
];

/** The requests other than the blueprint and item reads the node makes on the side. */
const writes = (requests: RecordedRequest[]) => requests.filter((r) => r.method !== 'GET');

beforeAll(async () => {
	api = await startFakeStageline();
});
afterAll(() => api.close());
beforeEach(() => api.reset());
afterEach(() => expect(api.violations).toEqual([])); // every request fits the contract's schemas

describe('item', () => {
	it('create sends the create body, typed custom fields as metadata, and an Idempotency-Key (two items: one batch)', async () => {
		api.on('GET /v1/ext/pipelines/p1/fields', { body: FIELDS });
		api.on('POST /v1/ext/items', (req) => ({ status: 201, body: { ...ITEM, ...(req.body as object) } }));
		api.on('POST /v1/ext/items/batch', batchAnswer('item', ({ op: _op, ...body }) => ({ ...ITEM, ...body })));
		const params = {
			resource: 'item',
			operation: 'create',
			pipelineId: 'p1',
			stageId: 's1',
			statusId: 'st1',
			name: 'Acme deal',
			customFields: {
				mappingMode: 'defineBelow',
				value: { email: 'ada@example.com', deal_value: '1500', close_date: '2026-03-01T00:00:00.000+00:00', tier: 'gold', vip: 'true' },
				schema: [],
			},
			additionalFields: { source: 'n8n' },
		};
		const result = await runStageline(credential(), params, { inputItems: [{}, {}] });
		expect(result.error).toBeUndefined();
		const body = {
			name: 'Acme deal',
			pipeline_id: 'p1',
			stage_id: 's1',
			status_id: 'st1',
			source: 'n8n',
			metadata: { email: 'ada@example.com', deal_value: 1500, close_date: '2026-03-01', tier: 'gold', vip: true },
		};
		// several input items: one batch (CONTRACT "Batch writes") with one key; one input item: one create with its key
		const posts = writes(api.requests);
		expect(posts.map((p) => p.path)).toEqual(['/v1/ext/items/batch']);
		expect(posts[0]!.body).toEqual({ operations: [{ op: 'create', ...body }, { op: 'create', ...body }] });
		expect(result.output).toEqual([{ ...ITEM, ...body }, { ...ITEM, ...body }]);
		const key = posts[0]!.headers['idempotency-key'];
		expect(key).toMatch(/^n8n-[0-9a-f]{64}$/);
		expect(api.requests.filter((r) => r.path.endsWith('/fields'))).toHaveLength(1); // blueprint read once per run
		// the same execution sends the same key (what Retry On Fail does); another execution sends another key
		api.requests.length = 0;
		await runStageline(credential(), params, { inputItems: [{}, {}] });
		expect(writes(api.requests).map((p) => p.headers['idempotency-key'])).toEqual([key]);
		api.requests.length = 0;
		await runStageline(credential(), params, { inputItems: [{}, {}], executionId: 'exec-2' });
		expect(writes(api.requests)[0]!.headers['idempotency-key']).not.toEqual(key);
		api.requests.length = 0;
		const single = await runStageline(credential(), params, { inputItems: [{}] });
		expect(single.output).toEqual([{ ...ITEM, ...body }]);
		const one = writes(api.requests);
		expect(one.map((p) => [p.path, p.body])).toEqual([['/v1/ext/items', body]]);
		expect(one[0]!.headers['idempotency-key']).toMatch(/^n8n-[0-9a-f]{64}$/);
		expect(one[0]!.headers['idempotency-key']).not.toEqual(key);
	});

	it('Retry On Fail resends the create with the same Idempotency-Key', async () => {
		let calls = 0;
		api.on('POST /v1/ext/items', () => (++calls === 1 ? problem(503, 'internal', 'Try again') : { status: 201, body: ITEM }));
		const result = await runStageline(
			credential(),
			{ resource: 'item', operation: 'create', pipelineId: 'p1', stageId: 's1', name: 'Acme deal' },
			{ retryOnFail: true },
		);
		expect(result.error).toBeUndefined();
		const posts = writes(api.requests);
		expect(posts).toHaveLength(2);
		expect(posts[0]!.body).toEqual({ name: 'Acme deal', pipeline_id: 'p1', stage_id: 's1', source: 'n8n' }); // source defaults to n8n
		expect(posts[1]!.headers['idempotency-key']).toEqual(posts[0]!.headers['idempotency-key']);
	});

	it('update reads the item\'s pipeline for custom field types and PATCHes the changed fields', async () => {
		api.on('GET /v1/ext/items/i1', { body: ITEM });
		api.on('GET /v1/ext/pipelines/p1/fields', { body: FIELDS });
		api.on('PATCH /v1/ext/items/i1', (req) => ({ body: { ...ITEM, ...(req.body as object), version: 2 } }));
		const result = await runStageline(credential(), {
			resource: 'item',
			operation: 'update',
			itemId: { __rl: true, mode: 'list', value: 'i1' },
			updateFields: { stageId: 's2', version: 1 },
			customFields: { mappingMode: 'defineBelow', value: { deal_value: 99 }, schema: [] },
		});
		expect(result.error).toBeUndefined();
		expect(writes(api.requests)[0]!.body).toEqual({ stage_id: 's2', version: 1, metadata: { deal_value: 99 } });
		expect(result.output[0]!.version).toBe(2);
	});

	it('get, and getMany with every filter and a Limit across pages', async () => {
		api.on('GET /v1/ext/items/i1', { body: ITEM });
		expect((await runStageline(credential(), { resource: 'item', operation: 'get', itemId: { __rl: true, mode: 'id', value: 'i1' } })).output).toEqual([ITEM]);
		api.on('GET /v1/ext/items', (req, base) =>
			req.query.cursor === undefined
				? { body: [ITEM, { ...ITEM, item_id: 'i2' }], headers: { link: `<${base}/v1/ext/items?cursor=n2>; rel="next"` } }
				: { body: [{ ...ITEM, item_id: 'i3' }, { ...ITEM, item_id: 'i4' }] },
		);
		api.requests.length = 0;
		const result = await runStageline(credential(), {
			resource: 'item',
			operation: 'getMany',
			returnAll: false,
			limit: 3,
			filters: {
				pipelineId: 'p1',
				stageId: 's1',
				statusId: 'st1',
				shortId: 'SALES-1',
				name: 'Acme deal',
				search: 'acm',
				createdAfter: '2026-01-01T00:00:00.000Z',
				updatedAfter: '2026-01-02T00:00:00.000Z',
			},
		});
		expect(result.output.map((i) => i.item_id)).toEqual(['i1', 'i2', 'i3']);
		expect(api.requests[0]!.query).toEqual({
			pipeline_id: 'p1',
			stage_id: 's1',
			status_id: 'st1',
			short_id: 'SALES-1',
			name: 'Acme deal',
			q: 'acm',
			created_after: '2026-01-01T00:00:00.000Z',
			updated_after: '2026-01-02T00:00:00.000Z',
			limit: '3',
		});
		expect(api.requests[1]!.query).toEqual({ cursor: 'n2', limit: '1' }); // min(remaining, 500)
	});

	it('getMany with Return All reads every page', async () => {
		api.on('GET /v1/ext/items', (req, base) =>
			req.query.cursor === undefined
				? { body: [ITEM], headers: { link: `<${base}/v1/ext/items?cursor=n2>; rel="next"` } }
				: { body: [{ ...ITEM, item_id: 'i2' }] },
		);
		const result = await runStageline(credential(), { resource: 'item', operation: 'getMany', returnAll: true });
		expect(result.output.map((i) => i.item_id)).toEqual(['i1', 'i2']);
		expect(api.requests[0]!.query).toEqual({ limit: '500' });
	});

	it('find by short ID or name, optionally within a pipeline; no match is no output', async () => {
		api.on('GET /v1/ext/items', (req) => ({ body: req.query.short_id === 'SALES-1' || req.query.name === 'Acme deal' ? [ITEM] : [] }));
		const byShort = await runStageline(credential(), { resource: 'item', operation: 'find', findBy: 'shortId', findValue: ' SALES-1 ' });
		expect(byShort.output).toEqual([ITEM]);
		expect(api.requests[0]!.query).toEqual({ short_id: 'SALES-1', limit: '25' });
		const byName = await runStageline(credential(), { resource: 'item', operation: 'find', findBy: 'name', findValue: 'Acme deal', findPipelineId: 'p1' });
		expect(byName.output).toEqual([ITEM]);
		expect(api.requests[1]!.query).toEqual({ name: 'Acme deal', pipeline_id: 'p1', limit: '25' });
		const none = await runStageline(credential(), { resource: 'item', operation: 'find', findBy: 'name', findValue: 'Nobody' });
		expect(none.output).toEqual([]);
	});

	it('checkDuplicates posts the pipeline, name and custom fields and returns the matches', async () => {
		api.on('GET /v1/ext/pipelines/p1/fields', { body: FIELDS });
		api.on('POST /v1/ext/items/check-duplicates', { body: [{ ...ITEM, matched_on: ['email'] }] });
		const result = await runStageline(credential(), {
			resource: 'item',
			operation: 'checkDuplicates',
			pipelineId: 'p1',
			name: '',
			customFields: { mappingMode: 'defineBelow', value: { email: 'ada@example.com' }, schema: [] },
		});
		expect(writes(api.requests)[0]!.body).toEqual({ pipeline_id: 'p1', metadata: { email: 'ada@example.com' } });
		expect(result.output).toEqual([{ duplicates: [{ ...ITEM, matched_on: ['email'] }], count: 1 }]);
	});
});

describe('task', () => {
	it('create sends the task body with an Idempotency-Key', async () => {
		api.on('POST /v1/ext/tasks', (req) => ({ status: 201, body: { ...TASK, ...(req.body as object) } }));
		const result = await runStageline(credential(), {
			resource: 'task',
			operation: 'create',
			title: 'Call Ada',
			dueAt: '2026-03-01T09:00:00.000Z',
			assignedTo: 'maria@acme.example',
			additionalFields: { priority: 'high', taskType: 'call', itemId: 'i1', durationMinutes: 30, reminderMinutes: 15, notes: 'n', description: 'd', isCompleted: false },
		});
		expect(result.error).toBeUndefined();
		const post = writes(api.requests)[0]!;
		expect(post.body).toEqual({
			title: 'Call Ada',
			due_at: '2026-03-01T09:00:00.000Z',
			assigned_to: 'maria@acme.example',
			priority: 'high',
			task_type: 'call',
			item_id: 'i1',
			duration_minutes: 30,
			reminder_minutes: 15,
			notes: 'n',
			description: 'd',
			is_completed: false,
		});
		expect(post.headers['idempotency-key']).toMatch(/^n8n-[0-9a-f]{64}$/);
	});

	it('update, get, complete', async () => {
		api.on('PATCH /v1/ext/tasks/t1', (req) => ({ body: { ...TASK, ...(req.body as object) } }));
		api.on('GET /v1/ext/tasks/t1', { body: TASK });
		const taskId = { __rl: true, mode: 'list', value: 't1' };
		await runStageline(credential(), { resource: 'task', operation: 'update', taskId, updateFields: { title: 'Call Ada again', priority: 'urgent' } });
		expect(api.requests[0]!.body).toEqual({ title: 'Call Ada again', priority: 'urgent' });
		expect((await runStageline(credential(), { resource: 'task', operation: 'get', taskId })).output).toEqual([TASK]);
		const done = await runStageline(credential(), { resource: 'task', operation: 'complete', taskId });
		expect(api.requests[2]!.body).toEqual({ is_completed: true });
		expect(done.output[0]!.is_completed).toBe(true);
	});

	it('getMany sends every task filter', async () => {
		api.on('GET /v1/ext/tasks', { body: [TASK] });
		const result = await runStageline(credential(), {
			resource: 'task',
			operation: 'getMany',
			returnAll: true,
			filters: {
				itemId: { __rl: true, mode: 'id', value: 'i1' },
				isCompleted: 'false',
				assignedTo: 'maria@acme.example',
				dueBefore: '2026-04-01T00:00:00.000Z',
				dueAfter: '2026-02-01T00:00:00.000Z',
			},
		});
		expect(result.output).toEqual([TASK]);
		expect(api.requests[0]!.query).toEqual({
			item_id: 'i1',
			is_completed: 'false',
			assigned_to: 'maria@acme.example',
			due_before: '2026-04-01T00:00:00.000Z',
			due_after: '2026-02-01T00:00:00.000Z',
			limit: '500',
		});
	});
});

describe('errors', () => {
	it('a problem becomes a NodeApiError with what to do, the detail and each failing field', async () => {
		api.on(
			'POST /v1/ext/items',
			problem(422, 'invalid_reference', 'Some values do not fit the pipeline.', {
				errors: [{ path: 'metadata.email', message: 'metadata.email must be an email address, e.g. ada@example.com.' }, { path: 'stage_id', message: 'unknown stage' }],
			}),
		);
		const result = await runStageline(credential(), { resource: 'item', operation: 'create', pipelineId: 'p1', stageId: 'sX', name: 'A' });
		expect(result.error?.message).toBe('Stageline could not use some of the values. Check the pipeline, stage, status and custom field values.');
		expect(result.error?.description).toBe(
			'Some values do not fit the pipeline.\n- metadata.email must be an email address, e.g. ada@example.com.\n- stage_id: unknown stage',
		);
		expect(result.error?.httpCode).toBe('422');
	});

	it.each([
		[401, 'unauthorized', /Create a new key in Stageline under Company Settings → API Keys, then update the Stageline API credential/],
		[402, 'subscription_inactive', /subscription is not active/],
		[403, 'forbidden', /not allowed to do this. Create a key with the missing scope/],
		[409, 'version_conflict', /Stageline now has version 7/],
		[429, 'rate_limited', /60 requests per minute per API key/],
	])('HTTP %i says what to do', async (status, code, message) => {
		// a Retry-After over 60 s is not waited out (the node waits at most once, up to 60 s)
		api.on('GET /v1/ext/items/i1', { ...problem(status, code, 'Refused.', { current_version: 7 }), headers: { 'retry-after': '120' } });
		const result = await runStageline(credential(), { resource: 'item', operation: 'get', itemId: { __rl: true, mode: 'id', value: 'i1' } });
		expect(result.error?.message).toMatch(message);
		expect(result.error?.httpCode).toBe(String(status));
		if (status === 429) expect(result.error?.description).toContain('Stageline asks to wait 120 s.');
	});

	it('Continue On Fail returns the error of each failing item and goes on with the others', async () => {
		api.on('GET /v1/ext/items/good', { body: ITEM });
		const result = await runStageline(
			credential(),
			{ resource: 'item', operation: 'get', itemId: { __rl: true, mode: 'id', value: '={{ $json.id }}' } },
			{ inputItems: [{ id: 'missing' }, { id: 'good' }], continueOnFail: true },
		);
		expect(result.error).toBeUndefined();
		expect(result.output).toHaveLength(2);
		expect(result.output[0]).toMatchObject({ error: expect.stringContaining('could not find it'), details: { httpCode: '404' } });
		expect(result.output[1]).toEqual(ITEM);
	});

	it('the message ends with the request id: the body\'s request_id, else the Request-Id header, none without either', async () => {
		const ID = 'req_8Zq2xWmC1vR4nT7bY0kLdA';
		const HEADER_ID = 'req_Hdr0000000000000000000';
		const get = (value: string) => runStageline(credential(), { resource: 'item', operation: 'get', itemId: { __rl: true, mode: 'id', value } });
		api.on('GET /v1/ext/items/a', { ...problem(404, 'not_found', 'No item a.', { request_id: ID }), headers: { 'request-id': HEADER_ID } });
		api.on('GET /v1/ext/items/b', { ...problem(404, 'not_found', 'No item b.'), headers: { 'request-id': HEADER_ID } });
		api.on('GET /v1/ext/items/c', { status: 502, body: 'Bad gateway' });
		expect((await get('a')).error?.message).toBe(
			`Stageline could not find it. Check the ID given to this node; it may have been deleted or belong to another company. (request ${ID})`,
		);
		expect((await get('b')).error?.message).toMatch(/ \(request req_Hdr0000000000000000000\)$/);
		const proxy = (await get('c')).error;
		expect(proxy?.message).toBe('Stageline had a server error (HTTP 502). This is usually temporary; try again in a few minutes.');
	});

	it('a failed operation of a batch names the batch request (its Request-Id header)', async () => {
		api.on('GET /v1/ext/pipelines/p1/fields', { body: FIELDS });
		api.on('POST /v1/ext/items/batch', (request) => {
			const operations = (request.body as { operations: unknown[] }).operations;
			return {
				headers: { 'request-id': 'req_Batch00000000000000000' },
				body: {
					results: operations.map((_operation, index) =>
						index === 0
							? { index, ref: null, status: 201, item: ITEM, problem: null }
							: { index, ref: null, status: 422, item: null, problem: problem(422, 'invalid_reference', 'Unknown stage.').body },
					),
				},
			};
		});
		const result = await runStageline(
			credential(),
			{ resource: 'item', operation: 'create', pipelineId: 'p1', stageId: 's1', name: 'A' },
			{ inputItems: [{}, {}], continueOnFail: true },
		);
		expect(result.error).toBeUndefined();
		expect(result.output[1]).toMatchObject({ error: expect.stringMatching(/ \(request req_Batch00000000000000000\)$/), details: { httpCode: '422' } });
	});

	it('refuses a plain-http Base URL that is not localhost, without sending the key', async () => {
		const result = await runStageline({ apiKey: 'sk_test', baseUrl: 'http://stageline.example.com' }, { resource: 'pipeline', operation: 'getMany' });
		expect(result.error?.message).toBe('Base URL http://stageline.example.com must start with https:// (plain http:// is only accepted for localhost).');
		expect(api.requests).toHaveLength(0);
	});
});

describe('pickers and custom fields', () => {
	it('searchItems searches names from two characters and pages with the Link URL', async () => {
		api.on('GET /v1/ext/items', (req, base) =>
			req.query.cursor === undefined
				? { body: [ITEM], headers: { link: `<${base}/v1/ext/items?cursor=n2&q=ac>; rel="next"` } }
				: { body: [{ ...ITEM, item_id: 'i2', name: 'Acme two', short_id: 'SALES-2' }] },
		);
		const context = loadOptionsContext(credential(), { resource: 'item', operation: 'get' });
		const first = await searchItems.call(context, 'ac');
		expect(first.results).toEqual([{ name: 'Acme deal (SALES-1)', value: 'i1' }]);
		expect(api.requests[0]!.query).toEqual({ q: 'ac', limit: '100' });
		const second = await searchItems.call(context, 'ac', first.paginationToken as string);
		expect(second).toEqual({ results: [{ name: 'Acme two (SALES-2)', value: 'i2' }], paginationToken: undefined });
		await searchItems.call(context, 'a');
		expect(api.requests[2]!.query).toEqual({ limit: '100' });
	});

	it('searchTasks keeps the titles that contain the filter', async () => {
		api.on('GET /v1/ext/tasks', { body: [TASK, { ...TASK, task_id: 't2', title: 'Email Bob' }] });
		const result = await searchTasks.call(loadOptionsContext(credential(), { resource: 'task', operation: 'get' }), 'ada');
		expect(result.results).toEqual([{ name: 'Call Ada (due 2026-03-01)', value: 't1' }]);
	});

	it('the resource mapper types fields as the blueprint says; required only on create', async () => {
		api.on('GET /v1/ext/pipelines/p1/fields', { body: FIELDS });
		const created = await getCustomFieldsForCreate.call(loadOptionsContext(credential(), { resource: 'item', operation: 'create', pipelineId: 'p1' }));
		expect(created.fields.map((f) => [f.id, f.type, f.required])).toEqual([
			['email', 'string', true],
			['deal_value', 'number', false],
			['close_date', 'dateTime', false],
			['tier', 'options', false],
			['vip', 'boolean', false],
		]);
		expect(created.fields[3]!.options).toEqual([{ name: 'gold', value: 'gold' }, { name: 'silver', value: 'silver' }]);
		api.on('GET /v1/ext/items/i1', { body: ITEM });
		const updated = await getCustomFieldsForUpdate.call(
			loadOptionsContext(credential(), { resource: 'item', operation: 'update', itemId: { __rl: true, mode: 'id', value: 'i1' } }),
		);
		expect(updated.fields.every((f) => !f.required)).toBe(true);
		// on Update, the stage dropdown lists the stages of the chosen item's pipeline
		api.on('GET /v1/ext/pipelines/p1/stages', { body: [{ id: 's1', name: 'Lead' }] });
		const updateParams = { resource: 'item', operation: 'update', itemId: { __rl: true, mode: 'id', value: 'i1' } };
		expect(await getStages.call(loadOptionsContext(credential(), updateParams))).toEqual([{ name: 'Lead', value: 's1' }]);
	});
});

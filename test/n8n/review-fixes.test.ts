/**
 * Behaviours found in the review of the n8n package, each through n8n-core's executor (WorkflowExecute) and
 * LoadOptionsContext against the scripted Stageline (which checks every body and query with the contract's schemas):
 * zone-less date-times, idempotency keys per run, the error output, Find with an empty value, "Map Automatically",
 * network errors, Check Duplicates without a match, the Idempotency Key override, the task picker's paging,
 * Retry-After, page limits, Source and empty updates.
 */
import net from 'node:net';
import { loadOptionsContext, runStageline } from './helpers/engine';
import { batchAnswer, problem, startFakeStageline, type FakeStageline, type RecordedRequest } from './helpers/fake-stageline';
import { searchTasks } from '../../n8n/nodes/Stageline/methods/listSearch';
import { ITEM } from './helpers/fixtures';

let api: FakeStageline;
const credential = () => ({ apiKey: 'sk_test', baseUrl: api.url });
const writes = (requests: RecordedRequest[]) => requests.filter((r) => r.method !== 'GET');

const TASK = { task_id: 't1', title: 'Call Ada', due_at: '2026-03-01T09:00:00.000Z' };
const FIELDS = [
	{ key: 'email', label: 'Email', type: 'email', required: true },
	{ key: 'deal_value', label: 'Deal value', type: 'number', required: false },
	{ key: 'meeting_at', label: 'Meeting', type: 'datetime', required: false },
];
const CREATE_ITEM = { resource: 'item', operation: 'create', pipelineId: 'p1', stageId: 's1', name: 'Acme deal' };
const CREATE_TASK = { resource: 'task', operation: 'create', title: 'Call Ada', dueAt: '2026-03-01T09:00:00.000Z', assignedTo: 'maria@acme.example' };

beforeAll(async () => {
	api = await startFakeStageline();
});
afterAll(() => api.close());
beforeEach(() => api.reset());
afterEach(() => expect(api.violations).toEqual([]));

describe('date-times without a zone (n8n date picker) are read in the workflow time zone', () => {
	it('task create and update due_at; zoned values are kept', async () => {
		api.on('POST /v1/ext/tasks', { status: 201, body: TASK });
		api.on('PATCH /v1/ext/tasks/t1', { body: TASK });
		await runStageline(credential(), { ...CREATE_TASK, dueAt: '2026-03-01T09:00:00' }, { timezone: 'Europe/Berlin' });
		await runStageline(
			credential(),
			{ resource: 'task', operation: 'update', taskId: { __rl: true, mode: 'id', value: 't1' }, updateFields: { dueAt: '2026-07-01T09:30:00' } },
			{ timezone: 'America/New_York' },
		);
		await runStageline(credential(), { ...CREATE_TASK, dueAt: '2026-03-01T09:00:00+05:30' }, { timezone: 'Europe/Berlin', executionId: 'e2' });
		const bodies = writes(api.requests).map((r) => (r.body as { due_at: string }).due_at);
		expect(bodies).toEqual(['2026-03-01T09:00:00.000+01:00', '2026-07-01T09:30:00.000-04:00', '2026-03-01T09:00:00+05:30']);
	});

	it('task filters due before/after and item filters created/updated after', async () => {
		api.on('GET /v1/ext/tasks', { body: [] });
		api.on('GET /v1/ext/items', { body: [] });
		await runStageline(
			credential(),
			{ resource: 'task', operation: 'getMany', returnAll: true, filters: { dueBefore: '2026-04-01T00:00:00', dueAfter: '2026-02-01T00:00:00Z' } },
			{ timezone: 'Europe/Berlin' },
		);
		await runStageline(
			credential(),
			{ resource: 'item', operation: 'getMany', returnAll: true, filters: { createdAfter: '2026-01-01T08:00:00', updatedAfter: '2026-06-01T08:00:00' } },
			{ timezone: 'Europe/Berlin' },
		);
		expect(api.requests[0]!.query).toMatchObject({ due_before: '2026-04-01T00:00:00.000+02:00', due_after: '2026-02-01T00:00:00Z' });
		expect(api.requests[1]!.query).toMatchObject({ created_after: '2026-01-01T08:00:00.000+01:00', updated_after: '2026-06-01T08:00:00.000+02:00' });
	});

	it('date-time custom fields', async () => {
		api.on('GET /v1/ext/pipelines/p1/fields', { body: FIELDS });
		api.on('POST /v1/ext/items', { status: 201, body: ITEM });
		const customFields = { mappingMode: 'defineBelow', value: { email: 'a@example.com', meeting_at: '2026-03-01T10:00:00' }, schema: [] };
		await runStageline(credential(), { ...CREATE_ITEM, customFields }, { timezone: 'Asia/Tokyo' });
		expect((writes(api.requests)[0]!.body as { metadata: object }).metadata).toEqual({ email: 'a@example.com', meeting_at: '2026-03-01T10:00:00.000+09:00' });
	});
});

describe('idempotency keys', () => {
	it('a second run of the node in one execution (a loop) sends other keys; Retry On Fail the same key', async () => {
		api.on('POST /v1/ext/items', { status: 201, body: ITEM });
		const result = await runStageline(credential(), CREATE_ITEM, { inputItems: [{}], secondInputItems: [{}] });
		expect(result.error).toBeUndefined();
		expect(result.run.data.resultData.runData.Stageline).toHaveLength(2);
		const keys = writes(api.requests).map((r) => r.headers['idempotency-key']);
		expect(keys).toHaveLength(2);
		expect(keys[1]).not.toBe(keys[0]);

		api.reset();
		let calls = 0;
		api.on('POST /v1/ext/items', () => (++calls === 1 ? problem(503, 'internal', 'Try again') : { status: 201, body: ITEM }));
		await runStageline(credential(), CREATE_ITEM, { retryOnFail: true });
		const retried = writes(api.requests).map((r) => r.headers['idempotency-key']);
		expect(retried).toHaveLength(2);
		expect(retried[1]).toBe(retried[0]);
	});

	it('Additional Fields → Idempotency Key replaces the derived key across executions (item and task)', async () => {
		api.on('POST /v1/ext/items', { status: 201, body: ITEM });
		api.on('POST /v1/ext/tasks', { status: 201, body: TASK });
		const item = { ...CREATE_ITEM, additionalFields: { idempotencyKey: '={{ "order-" + $json.order }}' } };
		await runStageline(credential(), item, { inputItems: [{ order: 7 }], executionId: 'e1' });
		await runStageline(credential(), item, { inputItems: [{ order: 7 }], executionId: 'e2' });
		await runStageline(credential(), { ...CREATE_TASK, additionalFields: { idempotencyKey: 'task-7' } }, { executionId: 'e3' });
		const posts = writes(api.requests);
		expect(posts.map((r) => r.headers['idempotency-key'])).toEqual(['order-7', 'order-7', 'task-7']);
		expect(posts[0]!.body).toEqual({ name: 'Acme deal', pipeline_id: 'p1', stage_id: 's1', source: 'n8n' });
	});
});

describe('On Error', () => {
	const params = { resource: 'item', operation: 'get', itemId: { __rl: true, mode: 'id', value: '={{ $json.id }}' } };
	const inputItems = [{ id: 'missing' }, { id: 'i1' }];

	it('Continue (using error output) sends failures to the error output and successes to the success output', async () => {
		api.on('GET /v1/ext/items/i1', { body: ITEM });
		const result = await runStageline(credential(), params, { inputItems, onError: 'continueErrorOutput' });
		expect(result.error).toBeUndefined();
		expect(result.output).toEqual([ITEM]);
		expect(result.errorOutput).toHaveLength(1);
		expect(result.errorOutput[0]).toMatchObject({
			id: 'missing', // n8n merges the input item's fields into the error item
			error: expect.stringContaining('could not find it'),
			details: { httpCode: '404', description: 'No route GET /v1/ext/items/missing' },
		});
	});

	it('Continue (regular output) keeps failures on the regular output, in order', async () => {
		api.on('GET /v1/ext/items/i1', { body: ITEM });
		const result = await runStageline(credential(), params, { inputItems, onError: 'continueRegularOutput' });
		expect(result.error).toBeUndefined();
		expect(result.output).toHaveLength(2);
		expect(result.output[0]).toMatchObject({ error: expect.stringContaining('could not find it'), details: { httpCode: '404' } });
		expect(result.output[1]).toEqual(ITEM);
		expect(result.errorOutput).toEqual([]);
	});
});

describe('item operations', () => {
	it.each([['   '], ['={{ $json.missing }}']])('Find refuses the empty value %j without a request', async (findValue) => {
		const result = await runStageline(credential(), { resource: 'item', operation: 'find', findBy: 'name', findValue });
		expect(result.error?.message).toBe('Value is empty: enter the name to find.');
		expect(api.requests).toHaveLength(0);
	});

	it('Map Automatically sends the input fields that are custom field keys of the blueprint', async () => {
		api.on('GET /v1/ext/pipelines/p1/fields', { body: FIELDS });
		api.on('POST /v1/ext/items/batch', batchAnswer('item', () => ITEM));
		const customFields = { mappingMode: 'autoMapInputData', value: null, schema: [] };
		await runStageline(credential(), { ...CREATE_ITEM, customFields }, {
			inputItems: [{ email: 'ada@example.com', deal_value: '1500', unrelated: 'x', meeting_at: '' }, { other: 1 }],
		});
		const bodies = (writes(api.requests)[0]!.body as { operations: Array<{ metadata?: object }> }).operations;
		expect(bodies[0]!.metadata).toEqual({ email: 'ada@example.com', deal_value: 1500 });
		expect(bodies[1]!.metadata).toBeUndefined();
	});

	it('Check Duplicates outputs one summary item per input item, also without a match', async () => {
		api.on('POST /v1/ext/items/check-duplicates', (req) => ({
			body: (req.body as { name?: string }).name === 'Acme deal' ? [{ ...ITEM, matched_on: ['name'] }] : [],
		}));
		const result = await runStageline(
			credential(),
			{ resource: 'item', operation: 'checkDuplicates', pipelineId: 'p1', name: '={{ $json.name }}' },
			{ inputItems: [{ name: 'Nobody' }, { name: 'Acme deal' }] },
		);
		expect(result.output).toEqual([
			{ duplicates: [], count: 0 },
			{ duplicates: [{ ...ITEM, matched_on: ['name'] }], count: 1 },
		]);
	});

	it('an added but empty Source keeps source n8n', async () => {
		api.on('POST /v1/ext/items', { status: 201, body: ITEM });
		await runStageline(credential(), { ...CREATE_ITEM, additionalFields: { source: '' } });
		expect((writes(api.requests)[0]!.body as { source: string }).source).toBe('n8n');
	});

	it.each([
		['item', { itemId: { __rl: true, mode: 'id', value: 'i1' }, updateFields: { version: 2 } }],
		['task', { taskId: { __rl: true, mode: 'id', value: 't1' }, updateFields: {} }],
	])('%s Update without any field is refused without a request', async (resource, params) => {
		const result = await runStageline(credential(), { resource, operation: 'update', ...params });
		expect(result.error?.message).toBe('Add at least one Update Field (or a custom field) to change.');
		expect(writes(api.requests)).toHaveLength(0);
	});
});

describe('transport', () => {
	it('an unreachable server says "Could not reach Stageline at <base>" with the item index', async () => {
		const closed = await new Promise<number>((resolve) => {
			const probe = net.createServer().listen(0, '127.0.0.1', () => {
				const { port } = probe.address() as net.AddressInfo;
				probe.close(() => resolve(port));
			});
		});
		const baseUrl = `http://127.0.0.1:${closed}`;
		const result = await runStageline({ apiKey: 'sk_test', baseUrl }, { resource: 'pipeline', operation: 'getMany' });
		expect(result.error?.message).toMatch(new RegExp(`^Could not reach Stageline at ${baseUrl}: `));
		expect(result.error?.description).toBe('Check the Base URL of the Stageline API credential and that the server is running.');
		expect((result.error as { context?: { itemIndex?: number } }).context?.itemIndex).toBe(0);
		const failed = await runStageline({ apiKey: 'sk_test', baseUrl }, { resource: 'pipeline', operation: 'getMany' }, { inputItems: [{}], continueOnFail: true });
		expect(failed.output[0]!.error).toMatch(/^Could not reach Stageline at /);
	});

	it('a 429 with a short Retry-After is waited out once; a long one or a second 429 fails with the Loop + Wait advice', async () => {
		let calls = 0;
		api.on('GET /v1/ext/pipelines', () => (++calls === 1 ? { ...problem(429, 'rate_limited', 'Slow down.'), headers: { 'retry-after': '0' } } : { body: [] }));
		expect((await runStageline(credential(), { resource: 'pipeline', operation: 'getMany' })).error).toBeUndefined();
		expect(calls).toBe(2);
		api.on('GET /v1/ext/pipelines', { ...problem(429, 'rate_limited', 'Slow down.'), headers: { 'retry-after': '0' } });
		api.requests.length = 0;
		const twice = await runStageline(credential(), { resource: 'pipeline', operation: 'getMany' });
		expect(api.requests).toHaveLength(2);
		expect(twice.error?.message).toMatch(/Loop Over Items .* Wait node of 60 seconds/);
		api.on('GET /v1/ext/pipelines', { ...problem(429, 'rate_limited', 'Slow down.'), headers: { 'retry-after': '61' } });
		api.requests.length = 0;
		const long = await runStageline(credential(), { resource: 'pipeline', operation: 'getMany' });
		expect(api.requests).toHaveLength(1);
		expect(long.error?.description).toContain('Stageline asks to wait 61 s.');
	});

	it('later pages ask for min(remaining, 500): Limit 600 reads 500 + 100', async () => {
		const page = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ ...ITEM, item_id: `i${from + i}` }));
		api.on('GET /v1/ext/items', (req, base) =>
			req.query.cursor === undefined
				? { body: page(0, Number(req.query.limit)), headers: { link: `<${base}/v1/ext/items?cursor=c2&limit=500>; rel="next"` } }
				: { body: page(500, Number(req.query.limit)), headers: { link: `<${base}/v1/ext/items?cursor=c3&limit=500>; rel="next"` } },
		);
		const result = await runStageline(credential(), { resource: 'item', operation: 'getMany', returnAll: false, limit: 600 });
		expect(result.output).toHaveLength(600);
		expect(api.requests.map((r) => r.query)).toEqual([{ limit: '500' }, { cursor: 'c2', limit: '100' }]);
	});
});

describe('task picker', () => {
	it('reads further pages (at most four) until a title matches', async () => {
		const other = (n: number) => Array.from({ length: 3 }, (_, i) => ({ ...TASK, task_id: `x${n}-${i}`, title: 'Email Bob' }));
		api.on('GET /v1/ext/tasks', (req, base) => {
			const n = Number(req.query.cursor ?? '1');
			const body = n === 3 ? [...other(n), TASK] : other(n);
			const headers: Record<string, string> = n < 9 ? { link: `<${base}/v1/ext/tasks?cursor=${n + 1}&limit=100>; rel="next"` } : {};
			return { body, headers };
		});
		const context = loadOptionsContext(credential(), { resource: 'task', operation: 'get' });
		const found = await searchTasks.call(context, 'ada');
		expect(found.results).toEqual([{ name: 'Call Ada (due 2026-03-01)', value: 't1' }]);
		expect(api.requests).toHaveLength(3);
		api.requests.length = 0;
		const none = await searchTasks.call(context, 'nobody');
		expect(none.results).toEqual([]);
		expect(api.requests).toHaveLength(4);
		expect(none.paginationToken).toContain('cursor=5');
	});
});

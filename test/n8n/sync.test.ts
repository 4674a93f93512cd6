/**
 * Issue 25 in the n8n nodes: Item → Delete and Item → Create or Update run through n8n-core's executor against the
 * scripted Stageline (request bodies and queries checked with the contract's schemas), and the trigger's Item Deleted
 * event and server-side filters (CONTRACT "Subscription filters") against the REST hooks stand-in (subscribe bodies
 * checked with WebhookSubscribeSchema); deliveries pass previous values and deleted_at through.
 */
import crypto from 'node:crypto';
import type { IDataObject } from 'n8n-workflow';
import { loadOptionsContext, runStageline } from './helpers/engine';
import { problem, startFakeStageline, type FakeStageline } from './helpers/fake-stageline';
import { ITEM } from './helpers/fixtures';
import { deliverSigned, useHooksStandIn, type HooksStandIn } from './helpers/hooks-stand-in';
import { hookContext } from './helpers/trigger-context';
import { ITEM_CHANGE_FIELDS as SHARED_ITEM_FIELDS, TASK_CHANGE_FIELDS as SHARED_TASK_FIELDS, UPSERT_RESULTS as SHARED_RESULTS, UPSERT_RESULT_HEADER as SHARED_HEADER } from '@stageline/shared';
import { UPSERT_RESULTS, UPSERT_RESULT_HEADER } from '../../n8n/nodes/Stageline/descriptions/contract-keys';
import { upsertResultOf } from '../../n8n/nodes/Stageline/actions/item';
import { ITEM_CHANGE_FIELDS, TASK_CHANGE_FIELDS, filterKey, subscriptionFilter } from '../../n8n/nodes/StagelineTrigger/filter';
import { getChangedFieldFilter } from '../../n8n/nodes/StagelineTrigger/filter-options';
import { StagelineTrigger } from '../../n8n/nodes/StagelineTrigger/StagelineTrigger.node';

let api: FakeStageline;
const credential = () => ({ apiKey: 'sk_test', baseUrl: api.url });

beforeAll(async () => {
	api = await startFakeStageline();
});
afterAll(() => api.close());
beforeEach(() => api.reset());
afterEach(() => expect(api.violations).toEqual([]));

it('copies of contract constants match @stageline/shared (the package may not import it at runtime)', () => {
	expect([...ITEM_CHANGE_FIELDS]).toEqual([...SHARED_ITEM_FIELDS]);
	expect([...TASK_CHANGE_FIELDS]).toEqual([...SHARED_TASK_FIELDS]);
	expect([...UPSERT_RESULTS]).toEqual([...SHARED_RESULTS]);
	expect(UPSERT_RESULT_HEADER).toBe(SHARED_HEADER);
});

describe('Item → Delete', () => {
	it('sends DELETE /v1/ext/items/{id} (with version when given) and outputs { item_id, deleted: true }', async () => {
		api.on('DELETE /v1/ext/items/i1', { status: 204 });
		const result = await runStageline(credential(), {
			resource: 'item',
			operation: 'delete',
			itemId: { __rl: true, mode: 'id', value: 'i1' },
			deleteOptions: { version: 3 },
		});
		expect(result.error).toBeUndefined();
		expect(result.output).toEqual([{ item_id: 'i1', deleted: true }]);
		expect(api.requests.map((r) => [r.method, r.path, r.query])).toEqual([['DELETE', '/v1/ext/items/i1', { version: '3' }]]);
	});

	it('an item that is gone (404) fails that input item with what to check; Continue On Fail goes on with the others', async () => {
		api.on('DELETE /v1/ext/items/gone', problem(404, 'not_found', 'Item "gone" was not found.'));
		api.on('DELETE /v1/ext/items/i1', { status: 204 });
		const result = await runStageline(
			credential(),
			{ resource: 'item', operation: 'delete', itemId: { __rl: true, mode: 'id', value: '={{ $json.id }}' } },
			{ inputItems: [{ id: 'gone' }, { id: 'i1' }], continueOnFail: true },
		);
		expect(result.output[0]).toMatchObject({ error: expect.stringMatching(/could not find it/), details: { httpCode: '404', description: 'Item "gone" was not found.' } });
		expect(result.output[1]).toEqual({ item_id: 'i1', deleted: true });
	});

	it('a stale Version (409) says the item changed and to delete regardless by leaving Version empty', async () => {
		api.on('DELETE /v1/ext/items/i1', problem(409, 'version_conflict', 'Item SALES-1 is at version 4, not 3.', { current_version: 4 }));
		const result = await runStageline(credential(), {
			resource: 'item',
			operation: 'delete',
			itemId: { __rl: true, mode: 'id', value: 'i1' },
			deleteOptions: { version: 3 },
		});
		expect(result.error?.message).toMatch(/Stageline now has version 4.*update \(or delete\) regardless/);
	});
});

describe('Item → Create or Update', () => {
	const params = {
		resource: 'item',
		operation: 'upsert',
		pipelineId: 'p1',
		stageId: 's1',
		name: 'Acme deal',
		customFields: { mappingMode: 'defineBelow', value: { email: 'ada@example.com' }, schema: [] },
	};

	it.each([
		[201, 'created'],
		[200, 'updated'],
		[200, 'unchanged'],
	] as const)('%s %s: POST /items/upsert with the create body and an Idempotency-Key; output carries upsert_result', async (status, outcome) => {
		api.on('GET /v1/ext/pipelines/p1/fields', { body: [{ key: 'email', label: 'Email', type: 'email', required: true }] });
		api.on('POST /v1/ext/items/upsert', (req) => ({ status, body: { ...ITEM, ...(req.body as object) }, headers: { 'Stageline-Upsert': outcome } }));
		const result = await runStageline(credential(), params);
		expect(result.error).toBeUndefined();
		const post = api.requests.find((r) => r.method === 'POST')!;
		expect(post.body).toEqual({ name: 'Acme deal', pipeline_id: 'p1', stage_id: 's1', source: 'n8n', metadata: { email: 'ada@example.com' } });
		expect(post.headers['idempotency-key']).toMatch(/^n8n-[0-9a-f]{64}$/);
		expect(result.output).toEqual([expect.objectContaining({ item_id: 'i1', upsert_result: outcome })]);
	});

	it('its Idempotency-Key is its own (never the one Create would send for the same input item)', async () => {
		api.on('GET /v1/ext/pipelines/p1/fields', { body: [{ key: 'email', label: 'Email', type: 'email' }] });
		api.on('POST /v1/ext/items/upsert', { status: 200, body: ITEM, headers: { 'Stageline-Upsert': 'unchanged' } });
		api.on('POST /v1/ext/items', { status: 201, body: ITEM });
		await runStageline(credential(), params);
		await runStageline(credential(), { ...params, operation: 'create' });
		const [upsertKey, createKey] = api.requests.filter((r) => r.method === 'POST').map((r) => r.headers['idempotency-key']);
		expect(upsertKey).not.toBe(createKey);
	});

	it('several matches (409 ambiguous_match): the message says nothing changed, the details list the matches', async () => {
		api.on('GET /v1/ext/pipelines/p1/fields', { body: [] });
		api.on('POST /v1/ext/items/upsert', problem(409, 'ambiguous_match', 'Two items match on email.', { matches: ['i1', 'i2'] }));
		const result = await runStageline(credential(), { ...params, customFields: { mappingMode: 'defineBelow', value: null } }, { continueOnFail: true });
		expect(result.output[0]).toMatchObject({
			error: expect.stringMatching(/^Several items match this one .* changed nothing/),
			details: { httpCode: '409', description: 'Two items match on email. Matching items: i1, i2.' },
		});
	});

	it('a pipeline without duplicate detection (422 upsert_unavailable) says what the upsert needs', async () => {
		api.on('POST /v1/ext/items/upsert', problem(422, 'upsert_unavailable', 'Pipeline "Sales" has no duplicate detection.'));
		const result = await runStageline(credential(), { ...params, customFields: { mappingMode: 'defineBelow', value: null } });
		expect(result.error?.message).toMatch(/cannot tell whether this item exists already/);
	});

	it('without the header (a proxy dropped it): 201 is created, else updated', () => {
		expect(upsertResultOf(201, undefined)).toBe('created');
		expect(upsertResultOf(200, undefined)).toBe('updated');
		expect(upsertResultOf(200, 'UNCHANGED')).toBe('unchanged');
	});
});

describe('Stageline Trigger: filters and new events', () => {
	const methods = new StagelineTrigger().webhookMethods.default;
	const standIn = useHooksStandIn();
	const { setup, url: URL } = standIn;
	let hooks: HooksStandIn;
	beforeEach(() => {
		hooks = standIn.hooks();
	});

	it('offers Item Deleted', () => {
		const events = new StagelineTrigger().description.properties.find((p) => p.name === 'events')!;
		expect(events.options).toContainEqual(expect.objectContaining({ name: 'Item Deleted', value: 'item.deleted' }));
	});

	it('subscribes each event with its server-side filter: pipeline for every event, stage for item events, each kind of field for its update event', async () => {
		const s = setup(['item.updated', 'item.deleted', 'task.updated', 'task.created'], {
			pipelineId: 'p1',
			stageId: 's2',
			changedFields: ['item:deal_value', 'item:stage', 'task:due_at'],
		});
		await expect(methods.create.call(hookContext(s))).resolves.toBe(true);
		expect(hooks.subscriptions.map((x) => [x.event, x.filter])).toEqual([
			['item.updated', { pipeline_id: 'p1', stage_id: 's2', fields: ['deal_value', 'stage'] }],
			['item.deleted', { pipeline_id: 'p1', stage_id: 's2' }],
			['task.updated', { pipeline_id: 'p1', fields: ['due_at'] }],
			['task.created', { pipeline_id: 'p1' }],
		]);
	});

	it('no options: no filter member at all (every event, as before)', async () => {
		await methods.create.call(hookContext(setup(['item.created'], {})));
		expect(hooks.subscriptions.map((x) => x.filter)).toEqual([null]);
	});

	it('a task hook made when the Pipeline did not apply to task events is replaced by one with the pipeline filter', async () => {
		const staticData: IDataObject = {};
		await methods.create.call(hookContext(setup(['task.completed'], {}, staticData)));
		expect(hooks.subscriptions.map((x) => x.filter)).toEqual([null]);
		const withPipeline = setup(['task.completed'], { pipelineId: 'p1' }, staticData);
		await expect(methods.checkExists.call(hookContext(withPipeline))).resolves.toBe(false);
		await methods.create.call(hookContext(withPipeline));
		expect(hooks.subscriptions.map((x) => x.filter)).toEqual([{ pipeline_id: 'p1' }]);
	});

	it('a restart with the same options finds the hooks; changed options subscribe again with the new filter', async () => {
		const staticData: IDataObject = {};
		await methods.create.call(hookContext(setup(['item.updated'], { pipelineId: 'p1' }, staticData)));
		await expect(methods.checkExists.call(hookContext(setup(['item.updated'], { pipelineId: 'p1' }, staticData)))).resolves.toBe(true);
		const changed = setup(['item.updated'], { pipelineId: 'p1', changedFields: ['item:name'] }, staticData);
		await expect(methods.checkExists.call(hookContext(changed))).resolves.toBe(false);
		expect(hooks.subscriptions).toEqual([]); // the old one was deleted
		await methods.create.call(hookContext(changed));
		expect(hooks.subscriptions.map((x) => x.filter)).toEqual([{ pipeline_id: 'p1', fields: ['name'] }]);
		await expect(methods.checkExists.call(hookContext(changed))).resolves.toBe(true);
	});

	it('a Stage without its Pipeline is refused before anything is subscribed', async () => {
		await expect(methods.create.call(hookContext(setup(['item.created'], { stageId: 's2' })))).rejects.toThrow(/Choose the Pipeline of the Stage/);
		expect(hooks.requests).toEqual([]);
	});

	it('filter rules: task events take the pipeline but never the stage; item fields never reach task.updated', () => {
		const params = { pipelineId: 'p1', stageId: 's2', changedFields: ['item:name'] };
		expect(subscriptionFilter('task.completed', params)).toEqual({ pipeline_id: 'p1' });
		expect(subscriptionFilter('task.updated', params)).toEqual({ pipeline_id: 'p1' });
		expect(subscriptionFilter('item.stage_changed', params)).toEqual({ pipeline_id: 'p1', stage_id: 's2' });
		expect(subscriptionFilter('task.created', { pipelineId: '', stageId: '', changedFields: ['item:name'] })).toBeUndefined();
		expect(filterKey({ fields: ['b', 'a'] })).toBe(filterKey({ fields: ['a', 'b'] }));
		expect(filterKey(null)).toBe('');
	});

	it('the field list offers item fields (built-ins and the pipeline\'s custom fields) for Item Updated and task fields for Task Updated', async () => {
		api.on('GET /v1/ext/pipelines/p1/fields', { body: [{ key: 'deal_value', label: 'Deal value', type: 'number' }] });
		const both = await getChangedFieldFilter.call(loadOptionsContext(credential(), { events: ['item.updated', 'task.updated'], pipelineId: 'p1' }));
		expect(both.map((o) => o.value)).toEqual([
			...ITEM_CHANGE_FIELDS.map((f) => `item:${f}`),
			'item:deal_value',
			...TASK_CHANGE_FIELDS.map((f) => `task:${f}`),
		]);
		expect(both.find((o) => o.value === 'item:deal_value')!.name).toBe('Item: Deal value');
		const none = await getChangedFieldFilter.call(loadOptionsContext(credential(), { events: ['item.created'] }));
		expect(none).toEqual([]);
	});

	it('deliveries pass previous values (tasks too) and deleted_at through to the run', async () => {
		const secret = `whsec_${crypto.randomBytes(32).toString('base64')}`;
		const staticData: IDataObject = { stageline: { [URL]: { 'task.updated': { id: 'wh1', secret }, 'item.deleted': { id: 'wh2', secret } } } };
		const deliver = (event: string, payload: object) => deliverSigned(secret, event, payload, ['task.updated', 'item.deleted'], staticData);
		const taskChange = { task_id: 't1', item_id: null, changed_fields: ['item_id'], previous: { item_id: 'i9' } };
		expect((await deliver('task.updated', taskChange)).workflowData).toEqual([[{ json: { event: 'task.updated', ...taskChange } }]]);
		const deleted = { ...ITEM, deleted_at: '2026-11-26T10:00:00.000Z' };
		expect((await deliver('item.deleted', deleted)).workflowData).toEqual([[{ json: { event: 'item.deleted', ...deleted } }]]);
	});
});

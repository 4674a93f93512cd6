/**
 * Issue 31 item 5 (n8n) on the n8n engine against a real Stageline server (the built server with the demo company:
 * embedded PGlite, or PostgreSQL when TEST_DATABASE_URL is set; 60 requests per 10-second window):
 * - the Stageline Polling Trigger (n8n-core PollContext, the cursor in the workflow's static data): first activation on
 *   an empty feed, the first events, next runs in commit order, "Fetch Test Event" (manual mode), the Events and
 *   Pipeline filters (a filtered-out task, a quiet filter whose cursor still moves to the newest event), and
 *   `410 cursor_expired` (an events_missed item, then a restart from the newest event);
 * - the Stageline node's batches (WorkflowExecute): 250 input items of Item → Create are 3 requests (100 + 100 + 50),
 *   one bad item under Continue On Fail is that item's error and the other 249 are created, each output paired with
 *   its input item; running the same execution again (Retry On Fail) replays the batches and creates nothing;
 *   without Continue On Fail the node stops after the batch holding the failure; Create or Update and Task → Create
 *   in batches; an item with its own Idempotency Key goes alone.
 * Requests go through a counting proxy, so the request counts are the nodes' own.
 */
import type { IDataObject, INodeParameters } from 'n8n-workflow';
import { BATCH_MAX_OPERATIONS as CONTRACT_BATCH_MAX } from '@stageline/shared';
import { activePollingWorkflow, fetchTestEvent, runStageline, type StagelineCredential } from './helpers/engine';
import { startCountingProxy, type CountingProxy } from './helpers/counting-proxy';
import { startStageline, stagelineApi, type StagelineServer } from './real-n8n/stageline';
import { BATCH_MAX_OPERATIONS } from '../../n8n/nodes/Stageline/actions/batch';
import { EVENTS_MISSED } from '../../n8n/nodes/StagelinePollingTrigger/feed';

jest.setTimeout(180_000);

let stageline: StagelineServer;
let proxy: CountingProxy;
let credential: StagelineCredential;
let salesId: string;
let leadId: string;

beforeAll(async () => {
	// 60 requests per 10-second window: this file makes about 55 requests in well under a minute (the batches would
	// fit the default window; the polls and the checks beside them would not)
	stageline = await startStageline({ RATE_LIMIT_WINDOW_SECONDS: '10' });
	proxy = await startCountingProxy(stageline.url);
	credential = { apiKey: stageline.apiKey, baseUrl: proxy.url };
	salesId = ((await stagelineApi(stageline, 'GET', '/v1/ext/pipelines')).body[0] as { id: string }).id;
	leadId = ((await stagelineApi(stageline, 'GET', `/v1/ext/pipelines/${salesId}/stages`)).body[0] as { id: string }).id;
});
afterAll(async () => {
	await proxy?.close();
	await stageline?.stop();
});

const createItem = async (name: string) => {
	const res = await stagelineApi(stageline, 'POST', '/v1/ext/items', { name, pipeline_id: salesId, stage_id: leadId });
	expect(res.status).toBe(201);
	return res.body as { item_id: string };
};
const createTask = async (title: string, itemId?: string) => {
	const res = await stagelineApi(stageline, 'POST', '/v1/ext/tasks', { title, due_at: '2026-12-01T09:00:00Z', assigned_to: 'ops', ...(itemId ? { item_id: itemId } : {}) });
	expect(res.status).toBe(201);
	return res.body as { task_id: string };
};
const newestEventId = async () => ((await stagelineApi(stageline, 'GET', '/v1/ext/events?limit=1')).body[0] as { event_id: string } | undefined)?.event_id;
const ALL_EVENTS = ['item.created', 'item.updated', 'item.stage_changed', 'item.deleted', 'task.created', 'task.updated', 'task.completed', 'note.created', 'note.updated', 'note.deleted'];

describe('Stageline Polling Trigger', () => {
	// One active workflow across these tests (as n8n keeps it between polls); they run in order.
	let active: ReturnType<typeof activePollingWorkflow>;

	it('on activation over an empty feed emits nothing; the first events then come, oldest first', async () => {
		expect(await newestEventId()).toBeUndefined(); // a fresh company: nothing happened yet
		active = activePollingWorkflow(credential, { events: ALL_EVENTS });
		proxy.reset();
		expect(await active.poll()).toBeNull();
		expect(active.staticData()).toMatchObject({ started: true, lastEventId: null });
		expect(proxy.requests.map((r) => r.path)).toEqual(['/v1/ext/events?limit=1']);

		const first = await createItem('Poll first');
		const second = await createItem('Poll second');
		const events = await active.poll();
		expect(events?.map((e) => [e.event, e.item_id])).toEqual([
			['item.created', first.item_id],
			['item.created', second.item_id],
		]);
		expect(events?.[0]).toMatchObject({ event_id: expect.any(String), occurred_at: expect.any(String), name: 'Poll first', pipeline_id: salesId });
		expect(active.staticData().lastEventId).toBe(events?.[1]?.event_id);
		expect(active.staticData().lastEventId).toBe(await newestEventId());
	});

	it('next polls emit only what happened since, in commit order, and nothing when nothing happened', async () => {
		const item = await createItem('Poll third');
		const patched = await stagelineApi(stageline, 'PATCH', `/v1/ext/items/${item.item_id}`, { name: 'Poll third, renamed' });
		expect(patched.status).toBe(200);
		proxy.reset();
		const events = await active.poll();
		expect(events?.map((e) => [e.event, e.item_id, e.name])).toEqual([
			['item.created', item.item_id, 'Poll third'],
			['item.updated', item.item_id, 'Poll third, renamed'],
		]);
		expect(events?.[1]).toMatchObject({ changed_fields: ['name'], previous: { name: 'Poll third' } });
		// every event chosen and no pipeline: one request per poll, `after` the cursor
		expect(proxy.requests).toHaveLength(1);
		expect(proxy.requests[0]!.path).toMatch(/^\/v1\/ext\/events\?after=[^&]+&limit=500$/);
		expect(await active.poll()).toBeNull();
		expect(active.staticData().lastEventId).toBe(await newestEventId());
	});

	it('"Fetch Test Event" returns the newest matching event and leaves the cursor alone', async () => {
		const cursor = active.staticData().lastEventId;
		const test = await fetchTestEvent(credential, { events: ['item.created'] });
		expect(test.error).toBeUndefined();
		expect(test.output).toEqual([expect.objectContaining({ event: 'item.created', name: 'Poll third' })]);
		expect(active.staticData().lastEventId).toBe(cursor);
		const none = await fetchTestEvent(credential, { events: ['note.deleted'] });
		expect(none.output).toEqual([]);
		expect(none.error?.message).toBe('No data with the current filter could be found');
	});

	it('the Events and Pipeline filters: a task without an item is not of the pipeline, a linked one is', async () => {
		const filtered = activePollingWorkflow(credential, { events: ['item.created', 'task.created'], pipelineId: salesId });
		expect(await filtered.poll()).toBeNull(); // activation: starts at the newest event
		const loose = await createTask('No item');
		const item = await createItem('Poll filtered');
		await stagelineApi(stageline, 'PATCH', `/v1/ext/items/${item.item_id}`, { name: 'Poll filtered, renamed' }); // item.updated: not chosen
		const linked = await createTask('Linked', item.item_id);
		proxy.reset();
		const events = await filtered.poll();
		expect(events?.map((e) => [e.event, e.task_id ?? e.item_id])).toEqual([
			['item.created', item.item_id],
			['task.created', linked.task_id],
		]);
		expect(events?.some((e) => e.task_id === loose.task_id)).toBe(false);
		// a filtered poll reads the feed's newest event first, then the filtered feed after the cursor
		expect(proxy.requests).toHaveLength(2);
		expect(proxy.requests[0]!.path).toBe('/v1/ext/events?limit=1');
		expect(decodeURIComponent(proxy.requests[1]!.path)).toMatch(new RegExp(`^/v1/ext/events\\?event=item\\.created,task\\.created&pipeline_id=${salesId}&after=[^&]+&limit=500$`));
	});

	it('a quiet filter still moves the cursor to the newest event (no false cursor_expired after retention)', async () => {
		const quiet = activePollingWorkflow(credential, { events: ALL_EVENTS, pipelineId: 'no-such-pipeline' });
		expect(await quiet.poll()).toBeNull();
		const before = quiet.staticData().lastEventId;
		await createItem('Poll quiet');
		expect(await quiet.poll()).toBeNull();
		const newest = await newestEventId();
		expect(newest).not.toBe(before);
		expect(quiet.staticData().lastEventId).toBe(newest);
	});

	it('410 cursor_expired: an events_missed item, then the trigger goes on from the newest event', async () => {
		const expired = activePollingWorkflow(credential, { events: ALL_EVENTS });
		expect(await expired.poll()).toBeNull();
		// an event id the server does not retain: what a cursor becomes once retention purged its event
		expired.setStatic('lastEventId', 'evt-purged-long-ago');
		const events = await expired.poll();
		expect(events).toEqual([
			expect.objectContaining({
				event: EVENTS_MISSED,
				missed_after_event_id: 'evt-purged-long-ago',
				resumed_after_event_id: await newestEventId(),
				detail: expect.stringMatching(/not retained/),
			}),
		]);
		expect(expired.staticData().lastEventId).toBe(await newestEventId());
		expect(await expired.poll()).toBeNull();
		const item = await createItem('Poll after expiry');
		expect((await expired.poll())?.map((e) => e.item_id)).toEqual([item.item_id]);
	});
});

describe('Stageline node batches', () => {
	const createParams = (extra: INodeParameters = {}): INodeParameters => ({
		resource: 'item',
		operation: 'create',
		pipelineId: salesId,
		stageId: '={{ $json.stage }}',
		name: '={{ $json.name }}',
		...extra,
	});
	const itemsNamed = async (prefix: string) =>
		((await stagelineApi(stageline, 'GET', `/v1/ext/items?q=${encodeURIComponent(prefix)}&limit=500`)).body as Array<{ name: string }>).map((i) => i.name);

	it('the batch size is the contract\'s', () => {
		expect(BATCH_MAX_OPERATIONS).toBe(CONTRACT_BATCH_MAX);
	});

	it('250 input items of Create Item are 3 requests; a bad one is its own error under Continue On Fail; a retry creates nothing', async () => {
		const input: IDataObject[] = Array.from({ length: 250 }, (_, i) => ({ name: `Batch-A ${String(i).padStart(3, '0')}`, stage: i === 137 ? 'no-such-stage' : leadId }));
		proxy.reset();
		const run = await runStageline(credential, createParams(), { inputItems: input, continueOnFail: true, executionId: 'batch-a' });
		expect(run.error).toBeUndefined();
		expect(proxy.requests.map((r) => `${r.method} ${r.path}`)).toEqual(Array(3).fill('POST /v1/ext/items/batch'));
		const keys = proxy.requests.map((r) => r.idempotencyKey);
		expect(new Set(keys).size).toBe(3);
		expect(run.output).toHaveLength(250);
		run.output.forEach((json, i) => {
			if (i === 137) expect(json).toEqual({ error: expect.any(String), details: { description: expect.stringMatching(/stage/i), httpCode: '422' } });
			else expect(json).toMatchObject({ name: input[i]!.name, item_id: expect.any(String), pipeline_id: salesId, source: 'n8n' });
		});
		const paired = run.run.data.resultData.runData.Stageline![0]!.data!.main[0]!.map((item) => item.pairedItem);
		expect(paired).toEqual(input.map((_, i) => ({ item: i })));
		const created = await itemsNamed('Batch-A');
		expect(created).toHaveLength(249);
		expect(created).not.toContain('Batch-A 137');

		// The same execution again (what Retry On Fail does): the same batches with the same keys, replayed by Stageline.
		proxy.reset();
		const again = await runStageline(credential, createParams(), { inputItems: input, continueOnFail: true, executionId: 'batch-a' });
		expect(proxy.requests.map((r) => r.idempotencyKey)).toEqual(keys);
		expect(again.output.map((j) => j.item_id)).toEqual(run.output.map((j) => j.item_id));
		expect(await itemsNamed('Batch-A')).toHaveLength(249);
	});

	it('without Continue On Fail the node fails on the bad item and sends no batch after the one holding it', async () => {
		const input: IDataObject[] = Array.from({ length: 150 }, (_, i) => ({ name: `Batch-B ${String(i).padStart(3, '0')}`, stage: i === 20 ? 'no-such-stage' : leadId }));
		proxy.reset();
		const run = await runStageline(credential, createParams(), { inputItems: input, executionId: 'batch-b' });
		expect(run.error).toMatchObject({ httpCode: '422' });
		expect(proxy.requests).toHaveLength(1);
		expect(await itemsNamed('Batch-B')).toHaveLength(99); // the non-atomic batch ran its other 99 operations
	});

	it('Create or Update, Update and Task → Create, Update go in batches; an item with its own Idempotency Key goes alone', async () => {
		const upsertParams = createParams({
			operation: 'upsert',
			customFields: { mappingMode: 'defineBelow', value: { email: '={{ $json.email }}' }, schema: [] },
		});
		const people = [
			{ name: 'Batch-C Ada', email: 'ada@batch.example', stage: leadId },
			{ name: 'Batch-C Bob', email: 'bob@batch.example', stage: leadId },
		];
		const first = await runStageline(credential, upsertParams, { inputItems: people, executionId: 'batch-c1' });
		expect(first.output.map((j) => [j.name, j.upsert_result])).toEqual([['Batch-C Ada', 'created'], ['Batch-C Bob', 'created']]);
		proxy.reset();
		const second = await runStageline(credential, upsertParams, { inputItems: [{ ...people[0], name: 'Batch-C Ada Lovelace' }, people[1]!], executionId: 'batch-c2' });
		expect(second.output.map((j) => [j.item_id, j.name, j.upsert_result])).toEqual([
			[first.output[0]!.item_id, 'Batch-C Ada Lovelace', 'updated'],
			[first.output[1]!.item_id, 'Batch-C Bob', 'unchanged'],
		]);
		expect(proxy.requests.filter((r) => r.method === 'POST').map((r) => r.path)).toEqual(['/v1/ext/items/batch']);

		// Update in a batch: a stale Version fails that item alone (409), the other is updated
		proxy.reset();
		const updates = await runStageline(
			credential,
			{ resource: 'item', operation: 'update', itemId: { __rl: true, mode: 'id', value: '={{ $json.id }}' }, updateFields: { name: '={{ $json.name }}', version: '={{ $json.version }}' } },
			{
				inputItems: [
					{ id: first.output[0]!.item_id, name: 'Batch-C Ada L.', version: second.output[0]!.version },
					{ id: first.output[1]!.item_id, name: 'Batch-C Robert', version: 99 },
				],
				continueOnFail: true,
				executionId: 'batch-c3',
			},
		);
		expect(proxy.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/ext/items/batch']);
		expect(updates.output[0]).toMatchObject({ item_id: first.output[0]!.item_id, name: 'Batch-C Ada L.' });
		expect(updates.output[1]).toMatchObject({ error: expect.stringMatching(/changed since/), details: { httpCode: '409' } });

		proxy.reset();
		const tasks = await runStageline(
			credential,
			{ resource: 'task', operation: 'create', title: '={{ $json.title }}', dueAt: '={{ $json.due }}', assignedTo: { __rl: true, mode: 'id', value: 'ops' }, additionalFields: { idempotencyKey: '={{ $json.key }}' } },
			{
				inputItems: [
					{ title: 'Batch-D one', due: '2026-12-01T09:00:00Z', key: '' },
					{ title: 'Batch-D bad', due: 'not a date', key: '' },
					{ title: 'Batch-D own key', due: '2026-12-01T09:00:00Z', key: 'batch-d-own-key' },
					{ title: 'Batch-D four', due: '2026-12-01T09:00:00Z', key: '' },
				],
				continueOnFail: true,
				executionId: 'batch-d',
			},
		);
		expect(tasks.output.map((j) => j.title ?? j.details)).toEqual(['Batch-D one', expect.objectContaining({ httpCode: '400' }), 'Batch-D own key', 'Batch-D four']);
		// [one, bad] as a batch, then the own-key item alone with its key, then [four] as a batch: writes keep the input order
		expect(proxy.requests.map((r) => [r.path, r.idempotencyKey === 'batch-d-own-key'])).toEqual([
			['/v1/ext/tasks/batch', false],
			['/v1/ext/tasks', true],
			['/v1/ext/tasks/batch', false],
		]);

		// Task → Update in a batch
		proxy.reset();
		const taskUpdates = await runStageline(
			credential,
			{ resource: 'task', operation: 'update', taskId: { __rl: true, mode: 'id', value: '={{ $json.id }}' }, updateFields: { title: '={{ $json.title }}' } },
			{ inputItems: [{ id: tasks.output[0]!.task_id, title: 'Batch-D one, renamed' }, { id: tasks.output[3]!.task_id, title: 'Batch-D four, renamed' }], executionId: 'batch-d2' },
		);
		expect(proxy.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/ext/tasks/batch']);
		expect(taskUpdates.output.map((j) => [j.task_id, j.title])).toEqual([
			[tasks.output[0]!.task_id, 'Batch-D one, renamed'],
			[tasks.output[3]!.task_id, 'Batch-D four, renamed'],
		]);
	});
});

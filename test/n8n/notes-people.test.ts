/**
 * Issue 30 in the Stageline node, through n8n-core's executor (WorkflowExecute) and LoadOptionsContext against the
 * scripted Stageline (request bodies and queries checked with the contract's schemas): the Note resource (CONTRACT
 * "Notes": create with an Idempotency-Key, get, get many with filters and Limit across pages, update with version,
 * delete), the Assigned To picker of tasks (CONTRACT "People": users from GET /v1/ext/users, or any identifier), and
 * the trigger's note events with the Pipeline and changed-field options as server-side filters (against the REST
 * hooks stand-in, subscribe bodies checked with WebhookSubscribeSchema).
 */
import crypto from 'node:crypto';
import {
	NOTE_BODY_MAX as SHARED_NOTE_BODY_MAX,
	NOTE_CHANGE_FIELDS as SHARED_NOTE_FIELDS,
	NoteCreateSchema,
	NoteDeleteQuerySchema,
	NoteListQuerySchema,
	NoteUpdateSchema,
} from '@stageline/shared';
import type { IDataObject, INodeProperties } from 'n8n-workflow';
import { deliverSigned, useHooksStandIn } from './helpers/hooks-stand-in';
import { hookContext } from './helpers/trigger-context';
import { NOTE_CHANGE_FIELDS, subscriptionFilter } from '../../n8n/nodes/StagelineTrigger/filter';
import { getChangedFieldFilter } from '../../n8n/nodes/StagelineTrigger/filter-options';
import { StagelineTrigger } from '../../n8n/nodes/StagelineTrigger/StagelineTrigger.node';
import { loadOptionsContext, runStageline } from './helpers/engine';
import { problem, startFakeStageline, type FakeStageline } from './helpers/fake-stageline';
import { searchUsers } from '../../n8n/nodes/Stageline/methods/listSearch';
import { NOTE_BODY_MAX, NOTE_CREATE_FIELDS, NOTE_DELETE_QUERY, NOTE_LIST_FILTERS, NOTE_UPDATE_FIELDS } from '../../n8n/nodes/Stageline/descriptions/contract-keys';
import { Stageline } from '../../n8n/nodes/Stageline/Stageline.node';

let api: FakeStageline;
const credential = () => ({ apiKey: 'sk_test', baseUrl: api.url });

const NOTE = {
	note_id: 'n1',
	item_id: 'i1',
	body: 'Called Ada: **wants a demo**',
	pinned: false,
	created_by: 'key1',
	created_at: '2026-01-01T00:00:00.000Z',
	updated_at: '2026-01-01T00:00:00.000Z',
	version: 1,
};
const USERS = [
	{ user_id: 'u1', name: 'Ada Lovelace', email: 'ada@acme.example' },
	{ user_id: 'u2', name: null, email: 'bob@acme.example' },
];
const TASK = {
	task_id: 't1',
	title: 'Call Ada',
	description: null,
	due_at: '2026-03-01T09:00:00.000Z',
	priority: 'none',
	is_completed: false,
	task_type: 'to_do',
	assigned_to: 'u1',
	assignee: USERS[0],
	created_by: 'key1',
	item_id: null,
	completed_at: null,
	notes: null,
	duration_minutes: null,
	reminder_minutes: null,
	created_at: '2026-01-01T00:00:00.000Z',
	updated_at: '2026-01-01T00:00:00.000Z',
};
const writes = () => api.requests.filter((r) => r.method !== 'GET');

beforeAll(async () => {
	api = await startFakeStageline();
});
afterAll(() => api.close());
beforeEach(() => api.reset());
afterEach(() => expect(api.violations).toEqual([])); // every request fits the contract's schemas

describe('Note resource', () => {
	it('is offered with Create, Delete, Get, Get Many and Update', () => {
		const properties = new Stageline().description.properties;
		const resource = properties.find((p) => p.name === 'resource')!;
		expect(resource.options).toContainEqual({ name: 'Note', value: 'note' });
		const operation = properties.find((p) => p.name === 'operation' && p.displayOptions?.show?.resource?.includes('note'))!;
		expect((operation.options as INodeProperties[]).map((o) => o.name)).toEqual(['Create', 'Delete', 'Get', 'Get Many', 'Update']);
	});

	it('its parameter maps are the contract\'s note bodies and queries', () => {
		const sorted = (keys: Iterable<string>) => [...keys].sort();
		expect(sorted(Object.values(NOTE_CREATE_FIELDS))).toEqual(sorted(Object.keys(NoteCreateSchema.shape)));
		expect(sorted(Object.values(NOTE_UPDATE_FIELDS))).toEqual(sorted(Object.keys(NoteUpdateSchema.shape)));
		expect(sorted(Object.values(NOTE_LIST_FILTERS))).toEqual(sorted(Object.keys(NoteListQuerySchema.shape).filter((k) => k !== 'limit' && k !== 'cursor')));
		expect(sorted(Object.values(NOTE_DELETE_QUERY))).toEqual(sorted(Object.keys(NoteDeleteQuerySchema.shape)));
		expect(NOTE_BODY_MAX).toBe(SHARED_NOTE_BODY_MAX);
		const collection = (operation: string, name: string) =>
			sorted(
				((new Stageline().description.properties.find(
					(p) => p.name === name && p.displayOptions?.show?.resource?.includes('note') && p.displayOptions.show.operation?.includes(operation),
				)?.options ?? []) as INodeProperties[]).map((o) => o.name),
			);
		expect(collection('update', 'updateFields')).toEqual(sorted(Object.keys(NOTE_UPDATE_FIELDS)));
		expect(collection('getMany', 'filters')).toEqual(sorted(Object.keys(NOTE_LIST_FILTERS)));
		expect(collection('delete', 'deleteOptions')).toEqual(sorted(Object.keys(NOTE_DELETE_QUERY)));
		expect(collection('create', 'additionalFields')).toEqual(['idempotencyKey', 'pinned']);
	});

	it('create POSTs item, body and pinned with an Idempotency-Key that Retry On Fail resends', async () => {
		let calls = 0;
		api.on('POST /v1/ext/notes', (req) => (++calls === 1 ? problem(503, 'internal', 'Try again') : { status: 201, body: { ...NOTE, ...(req.body as object) } }));
		const result = await runStageline(
			credential(),
			{
				resource: 'note',
				operation: 'create',
				itemId: { __rl: true, mode: 'list', value: 'i1' },
				body: '={{ $json.summary }}',
				additionalFields: { pinned: true },
			},
			{ inputItems: [{ summary: 'Called Ada' }], retryOnFail: true },
		);
		expect(result.error).toBeUndefined();
		const posts = writes();
		expect(posts).toHaveLength(2);
		expect(posts[0]!.body).toEqual({ item_id: 'i1', body: 'Called Ada', pinned: true });
		expect(posts[0]!.headers['idempotency-key']).toMatch(/^n8n-[0-9a-f]{64}$/);
		expect(posts[1]!.headers['idempotency-key']).toEqual(posts[0]!.headers['idempotency-key']);
		expect(result.output).toEqual([{ ...NOTE, body: 'Called Ada', pinned: true }]);
	});

	it('create of an item of another company (422) fails with the server\'s detail', async () => {
		api.on('POST /v1/ext/notes', problem(422, 'invalid_reference', 'item_id does not name an item.', { errors: [{ path: 'item_id', message: 'unknown item' }] }));
		const result = await runStageline(credential(), { resource: 'note', operation: 'create', itemId: { __rl: true, mode: 'id', value: 'elsewhere' }, body: 'x' }, { continueOnFail: true });
		expect(result.output[0]).toMatchObject({ details: { httpCode: '422', description: expect.stringContaining('item_id does not name an item.') } });
	});

	it('get, and get many with every filter and a Limit across pages', async () => {
		api.on('GET /v1/ext/notes/n1', { body: NOTE });
		expect((await runStageline(credential(), { resource: 'note', operation: 'get', noteId: ' n1 ' })).output).toEqual([NOTE]);
		api.on('GET /v1/ext/notes', (req, base) =>
			req.query.cursor === undefined
				? { body: [NOTE, { ...NOTE, note_id: 'n2' }], headers: { link: `<${base}/v1/ext/notes?cursor=c2&item_id=i1>; rel="next"` } }
				: { body: [{ ...NOTE, note_id: 'n3' }, { ...NOTE, note_id: 'n4' }] },
		);
		api.requests.length = 0;
		const result = await runStageline(
			credential(),
			{
				resource: 'note',
				operation: 'getMany',
				returnAll: false,
				limit: 3,
				filters: { itemId: { __rl: true, mode: 'list', value: 'i1' }, pinned: 'false', updatedAfter: '2026-02-01T10:00:00' },
			},
			{ timezone: 'Europe/Berlin' },
		);
		expect(result.error).toBeUndefined();
		expect(result.output.map((n) => n.note_id)).toEqual(['n1', 'n2', 'n3']);
		expect(api.requests[0]!.query).toEqual({ item_id: 'i1', pinned: 'false', updated_after: '2026-02-01T10:00:00.000+01:00', limit: '3' });
		expect(api.requests[1]!.query).toMatchObject({ cursor: 'c2' });
	});

	it('update PATCHes body, pinned and version; a stale version fails with the current one; no field is refused before any request', async () => {
		api.on('PATCH /v1/ext/notes/n1', (req) => ({ body: { ...NOTE, ...(req.body as object), version: 3 } }));
		const result = await runStageline(credential(), { resource: 'note', operation: 'update', noteId: 'n1', updateFields: { body: 'New text', pinned: true, version: 2 } });
		expect(result.error).toBeUndefined();
		expect(writes()[0]!.body).toEqual({ body: 'New text', pinned: true, version: 2 });
		expect(result.output[0]).toMatchObject({ body: 'New text', pinned: true, version: 3 });

		api.on('PATCH /v1/ext/notes/n1', problem(409, 'version_conflict', 'Note n1 is at version 4, not 2.', { current_version: 4 }));
		const stale = await runStageline(credential(), { resource: 'note', operation: 'update', noteId: 'n1', updateFields: { pinned: false, version: 2 } });
		expect(stale.error?.message).toMatch(/version 4/);

		api.requests.length = 0;
		const empty = await runStageline(credential(), { resource: 'note', operation: 'update', noteId: 'n1', updateFields: { version: 2 } });
		expect(empty.error?.message).toMatch(/Add at least one Update Field/);
		expect(api.requests).toEqual([]);
	});

	it('delete sends DELETE with the version and outputs { note_id, deleted: true }; a gone note (404) fails that input item only', async () => {
		api.on('DELETE /v1/ext/notes/n1', { status: 204 });
		api.on('DELETE /v1/ext/notes/gone', problem(404, 'not_found', 'Note "gone" was not found.'));
		const result = await runStageline(
			credential(),
			{ resource: 'note', operation: 'delete', noteId: '={{ $json.id }}', deleteOptions: { version: 2 } },
			{ inputItems: [{ id: 'gone' }, { id: 'n1' }], continueOnFail: true },
		);
		expect(result.output[0]).toMatchObject({ details: { httpCode: '404', description: 'Note "gone" was not found.' } });
		expect(result.output[1]).toEqual({ note_id: 'n1', deleted: true });
		expect(api.requests.map((r) => [r.method, r.path, r.query])).toEqual([
			['DELETE', '/v1/ext/notes/gone', { version: '2' }],
			['DELETE', '/v1/ext/notes/n1', { version: '2' }],
		]);
	});
});

describe('Task → Assigned To (users)', () => {
	it('searchUsers lists the company\'s users as "name (email)" (the email alone without a name), filters, and pages', async () => {
		api.on('GET /v1/ext/users', (req, base) =>
			req.query.cursor === undefined
				? { body: USERS, headers: { link: `<${base}/v1/ext/users?cursor=p2&limit=100>; rel="next"` } }
				: { body: [{ user_id: 'u3', name: 'Cleo', email: 'cleo@acme.example' }] },
		);
		const context = loadOptionsContext(credential(), { resource: 'task', operation: 'create' });
		const first = await searchUsers.call(context);
		expect(first.results).toEqual([
			{ name: 'Ada Lovelace (ada@acme.example)', value: 'u1' },
			{ name: 'bob@acme.example', value: 'u2' },
		]);
		expect(api.requests[0]!.query).toEqual({ limit: '100' });
		expect((await searchUsers.call(context, undefined, first.paginationToken as string)).results).toEqual([{ name: 'Cleo (cleo@acme.example)', value: 'u3' }]);
		api.requests.length = 0;
		// a filter that the first page does not match reads on
		expect((await searchUsers.call(context, 'CLEO')).results).toEqual([{ name: 'Cleo (cleo@acme.example)', value: 'u3' }]);
		expect(api.requests).toHaveLength(2);
		expect((await searchUsers.call(context, 'bob@')).results.map((r) => r.value)).toEqual(['u2']);
	});

	it('is a picker on Create, Update and the Get Many filter', () => {
		const properties = new Stageline().description.properties;
		const create = properties.find((p) => p.name === 'assignedTo' && p.displayOptions?.show?.operation?.includes('create'))!;
		expect(create).toMatchObject({ type: 'resourceLocator', required: true });
		expect(create.modes?.map((m) => m.name)).toEqual(['list', 'id']);
		expect(create.modes?.[0]?.typeOptions?.searchListMethod).toBe('searchUsers');
		for (const [operation, collection] of [['update', 'updateFields'], ['getMany', 'filters']]) {
			const options = properties.find((p) => p.name === collection && p.displayOptions?.show?.resource?.includes('task') && p.displayOptions.show.operation?.includes(operation!))!
				.options as INodeProperties[];
			expect(options.find((o) => o.name === 'assignedTo')).toMatchObject({ type: 'resourceLocator' });
		}
	});

	it('sends the chosen user\'s id, any identifier typed in, and a value saved as text before the picker, as assigned_to', async () => {
		api.on('POST /v1/ext/tasks', (req) => ({ status: 201, body: { ...TASK, ...(req.body as object) } }));
		api.on('PATCH /v1/ext/tasks/t1', (req) => ({ body: { ...TASK, ...(req.body as object) } }));
		api.on('GET /v1/ext/tasks', { body: [TASK] });
		const create = { resource: 'task', operation: 'create', title: 'Call Ada', dueAt: '2026-03-01T09:00:00Z' };
		const fromList = await runStageline(credential(), { ...create, assignedTo: { __rl: true, mode: 'list', value: 'u1' } });
		expect(fromList.output[0]).toMatchObject({ assigned_to: 'u1', assignee: USERS[0] });
		await runStageline(credential(), { ...create, assignedTo: { __rl: true, mode: 'id', value: 'maria@acme.example' } });
		await runStageline(credential(), { ...create, assignedTo: 'legacy-id' });
		await runStageline(credential(), {
			resource: 'task',
			operation: 'update',
			taskId: { __rl: true, mode: 'id', value: 't1' },
			updateFields: { assignedTo: { __rl: true, mode: 'list', value: 'u2' } },
		});
		await runStageline(credential(), { resource: 'task', operation: 'getMany', filters: { assignedTo: { __rl: true, mode: 'list', value: 'u1' } } });
		expect(api.requests.map((r) => (r.method === 'GET' ? r.query.assigned_to : (r.body as { assigned_to: string }).assigned_to))).toEqual([
			'u1',
			'maria@acme.example',
			'legacy-id',
			'u2',
			'u1',
		]);
	});
});

describe('Stageline Trigger: note events', () => {
	const methods = new StagelineTrigger().webhookMethods.default;
	const { hooks, setup, url: URL } = useHooksStandIn();

	it('offers Note Created, Note Updated and Note Deleted; its note fields are the contract\'s', () => {
		const events = new StagelineTrigger().description.properties.find((p) => p.name === 'events')!;
		expect((events.options as Array<{ value: string }>).map((o) => o.value)).toEqual(expect.arrayContaining(['note.created', 'note.updated', 'note.deleted']));
		expect([...NOTE_CHANGE_FIELDS]).toEqual([...SHARED_NOTE_FIELDS]);
	});

	it('subscribes each note event with the Pipeline filter, never the Stage; Note Updated takes only note fields', async () => {
		const s = setup(['note.created', 'note.updated', 'note.deleted'], { pipelineId: 'p1', stageId: 's2', changedFields: ['note:pinned', 'item:name', 'task:title'] });
		await expect(methods.create.call(hookContext(s))).resolves.toBe(true);
		expect(hooks().subscriptions.map((x) => [x.event, x.filter])).toEqual([
			['note.created', { pipeline_id: 'p1' }],
			['note.updated', { pipeline_id: 'p1', fields: ['pinned'] }],
			['note.deleted', { pipeline_id: 'p1' }],
		]);
		expect(subscriptionFilter('note.updated', { pipelineId: '', stageId: '', changedFields: ['note:body'] })).toEqual({ fields: ['body'] });
		expect(subscriptionFilter('note.created', { pipelineId: '', stageId: '', changedFields: ['note:body'] })).toBeUndefined();
		// a Stage without its Pipeline only matters to item events
		expect(subscriptionFilter('note.created', { pipelineId: '', stageId: 's2', changedFields: [] })).toBeUndefined();
	});

	it('the field list offers Body and Pinned for Note Updated', async () => {
		const options = await getChangedFieldFilter.call(loadOptionsContext(credential(), { events: ['note.updated'] }));
		expect(options).toEqual([
			{ name: 'Note: Body', value: 'note:body' },
			{ name: 'Note: Pinned', value: 'note:pinned' },
		]);
	});

	it('a note.updated delivery passes changed_fields and previous through; note.deleted its deleted_at', async () => {
		const secret = `whsec_${crypto.randomBytes(32).toString('base64')}`;
		const staticData: IDataObject = { stageline: { [URL]: { 'note.updated': { id: 'wh1', secret }, 'note.deleted': { id: 'wh2', secret } } } };
		const deliver = (event: string, payload: object) => deliverSigned(secret, event, payload, ['note.updated', 'note.deleted'], staticData);
		const change = { ...NOTE, pinned: true, version: 2, changed_fields: ['pinned'], previous: { pinned: false } };
		expect((await deliver('note.updated', change)).workflowData).toEqual([[{ json: { event: 'note.updated', ...change } }]]);
		const deleted = { ...NOTE, deleted_at: '2026-11-27T10:00:00.000Z' };
		expect((await deliver('note.deleted', deleted)).workflowData).toEqual([[{ json: { event: 'note.deleted', ...deleted } }]]);
	});
});

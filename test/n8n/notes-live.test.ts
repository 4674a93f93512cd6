/**
 * Issue 30 item 7: the Stageline node's Note resource on the n8n engine (WorkflowExecute, RoutingNode-free
 * programmatic node, real HTTP) against a real Stageline server (the built server with the demo company; embedded
 * PGlite, or PostgreSQL when TEST_DATABASE_URL is set): create with an Idempotency-Key (Retry On Fail and a second run
 * of the same execution create once), get, get many by item and pinned, update with version (a stale one is a
 * conflict), delete (then 404); and Task → Assigned To from the company's users, whose task then names its assignee.
 */
import type { ILoadOptionsFunctions } from 'n8n-workflow';
import { loadOptionsContext, runStageline } from './helpers/engine';
import { startStageline, stagelineApi, type StagelineServer } from './real-n8n/stageline';
import { searchUsers } from '../../n8n/nodes/Stageline/methods/listSearch';

jest.setTimeout(90_000);

let stageline: StagelineServer;
let itemId: string;
const credential = () => ({ apiKey: stageline.apiKey, baseUrl: stageline.url });

beforeAll(async () => {
	stageline = await startStageline();
	const pipeline = (await stagelineApi(stageline, 'GET', '/v1/ext/pipelines')).body[0] as { id: string };
	const stage = (await stagelineApi(stageline, 'GET', `/v1/ext/pipelines/${pipeline.id}/stages`)).body[0] as { id: string };
	const item = await stagelineApi(stageline, 'POST', '/v1/ext/items', { name: 'Notes live test', pipeline_id: pipeline.id, stage_id: stage.id });
	expect(item.status).toBe(201);
	itemId = item.body.item_id;
});
afterAll(async () => {
	await stageline?.stop();
});

const notesOfItem = async () => (await stagelineApi(stageline, 'GET', `/v1/ext/notes?item_id=${itemId}`)).body as Array<{ note_id: string; body: string }>;

// Each create runs in its own execution: the derived Idempotency-Key is per execution, node, run and input item.
it('creates a note once per input item, even when the execution runs the node again', async () => {
	const params = {
		resource: 'note',
		operation: 'create',
		itemId: { __rl: true, mode: 'list', value: itemId },
		body: '={{ $json.text }}',
		additionalFields: { pinned: true },
	};
	const first = await runStageline(credential(), params, { inputItems: [{ text: 'Called Ada: **wants a demo**' }], executionId: 'live-1' });
	expect(first.error).toBeUndefined();
	expect(first.output).toEqual([expect.objectContaining({ item_id: itemId, body: 'Called Ada: **wants a demo**', pinned: true, version: 1 })]);
	// Same execution, node and item: the same Idempotency-Key, so Stageline replays the first note.
	const again = await runStageline(credential(), params, { inputItems: [{ text: 'Called Ada: **wants a demo**' }], executionId: 'live-1' });
	expect(again.output).toEqual(first.output);
	expect((await notesOfItem()).map((n) => n.note_id)).toEqual([first.output[0]!.note_id]);
});

it('gets, lists by item and pinned, updates with version, refuses a stale version, deletes', async () => {
	const created = await runStageline(credential(), { resource: 'note', operation: 'create', itemId: { __rl: true, mode: 'id', value: itemId }, body: 'Second note' }, { executionId: 'live-2' });
	const noteId = created.output[0]!.note_id as string;
	expect(created.output[0]).toMatchObject({ pinned: false, version: 1 });

	const got = await runStageline(credential(), { resource: 'note', operation: 'get', noteId });
	expect(got.output).toEqual(created.output);

	const all = await runStageline(credential(), { resource: 'note', operation: 'getMany', returnAll: true, filters: { itemId: { __rl: true, mode: 'id', value: itemId } } });
	expect(all.output.map((n) => n.body)).toEqual(['Second note', 'Called Ada: **wants a demo**']); // newest first
	const pinned = await runStageline(credential(), { resource: 'note', operation: 'getMany', returnAll: false, limit: 1, filters: { pinned: 'true', itemId: { __rl: true, mode: 'id', value: itemId } } });
	expect(pinned.output.map((n) => n.body)).toEqual(['Called Ada: **wants a demo**']);

	const updated = await runStageline(credential(), { resource: 'note', operation: 'update', noteId, updateFields: { body: 'Second note, edited', pinned: true, version: 1 } });
	expect(updated.error).toBeUndefined();
	expect(updated.output[0]).toMatchObject({ note_id: noteId, body: 'Second note, edited', pinned: true, version: 2 });
	const stale = await runStageline(credential(), { resource: 'note', operation: 'update', noteId, updateFields: { pinned: false, version: 1 } }, { continueOnFail: true });
	expect(stale.output[0]).toMatchObject({ error: expect.stringMatching(/Stageline now has version 2/), details: { httpCode: '409' } });

	const staleDelete = await runStageline(credential(), { resource: 'note', operation: 'delete', noteId, deleteOptions: { version: 1 } }, { continueOnFail: true });
	expect(staleDelete.output[0]).toMatchObject({ details: { httpCode: '409' } });
	const deleted = await runStageline(credential(), { resource: 'note', operation: 'delete', noteId, deleteOptions: { version: 2 } });
	expect(deleted.output).toEqual([{ note_id: noteId, deleted: true }]);
	const gone = await runStageline(credential(), { resource: 'note', operation: 'get', noteId }, { continueOnFail: true });
	expect(gone.output[0]).toMatchObject({ error: expect.stringMatching(/could not find it/), details: { httpCode: '404' } });
	expect((await notesOfItem()).map((n) => n.body)).toEqual(['Called Ada: **wants a demo**']);
});

it('a note body the contract refuses (only white space) fails with the field named', async () => {
	const result = await runStageline(credential(), { resource: 'note', operation: 'create', itemId: { __rl: true, mode: 'id', value: itemId }, body: '   ' }, { continueOnFail: true, executionId: 'live-3' });
	expect(result.output[0]).toMatchObject({ details: { httpCode: '400', description: expect.stringContaining('body') } });
});

it('Assigned To lists the company\'s users; a task assigned to one names its assignee', async () => {
	const context = loadOptionsContext(credential(), { resource: 'task', operation: 'create' }) as unknown as ILoadOptionsFunctions;
	const users = await searchUsers.call(context);
	expect(users.results.length).toBeGreaterThan(0);
	const user = users.results[0]!;
	const task = await runStageline(credential(), {
		resource: 'task',
		operation: 'create',
		title: 'Follow up on the demo',
		dueAt: '2026-12-01T09:00:00Z',
		assignedTo: { __rl: true, mode: 'list', value: user.value },
	}, { executionId: 'live-4' });
	expect(task.error).toBeUndefined();
	expect(task.output[0]).toMatchObject({ assigned_to: user.value, assignee: { user_id: user.value } });
	const free = await runStageline(credential(), {
		resource: 'task',
		operation: 'create',
		title: 'Someone outside',
		dueAt: '2026-12-01T09:00:00Z',
		assignedTo: { __rl: true, mode: 'id', value: 'contractor@elsewhere.example' },
	}, { executionId: 'live-5' });
	expect(free.output[0]).toMatchObject({ assigned_to: 'contractor@elsewhere.example', assignee: null });
});

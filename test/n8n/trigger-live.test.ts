/**
 * The Stageline Trigger against a real Stageline server (the built server with the demo company; embedded PGlite,
 * or PostgreSQL when TEST_DATABASE_URL is set): activation subscribes real REST hooks, a real signed delivery reaches
 * a local receiver and `webhook()` accepts it (and refuses a tampered copy with 401), a restart's `checkExists` finds
 * the hooks, deactivation deletes them.
 */
import type { IDataObject, ILoadOptionsFunctions } from 'n8n-workflow';
import { startStageline, stagelineApi, type StagelineServer } from './real-n8n/stageline';
import { getPipelineFilter } from '../../n8n/nodes/StagelineTrigger/pipeline-filter';
import { StagelineTrigger } from '../../n8n/nodes/StagelineTrigger/StagelineTrigger.node';
import { startDeliveryReceiver, type DeliveryReceiver } from './helpers/delivery-receiver';
import { hookContext, webhookContext, type HookSetup, type WrittenResponse } from './helpers/trigger-context';

jest.setTimeout(90_000);

const trigger = new StagelineTrigger();
let stageline: StagelineServer;
let receiver: DeliveryReceiver;
let setup: HookSetup;

beforeAll(async () => {
	[stageline, receiver] = await Promise.all([startStageline(), startDeliveryReceiver()]);
	setup = { baseUrl: stageline.url, apiKey: stageline.apiKey, events: ['item.created', 'task.created'], webhookUrl: receiver.url, staticData: {} };
});
afterAll(async () => {
	await Promise.all([stageline?.stop(), receiver?.close()]);
});

/** Stageline's subscriptions as `[event, target_url]`. */
async function subscriptions(): Promise<string[][]> {
	const res = await stagelineApi(stageline, 'GET', '/v1/ext/webhooks');
	return (res.body as Array<{ event: string; target_url: string }>).map((s) => [s.event, s.target_url]);
}

it('subscribes on activation, verifies a real delivery, finds the hooks on restart and deletes them on deactivation', async () => {
	await expect(trigger.webhookMethods.default.checkExists.call(hookContext(setup))).resolves.toBe(false);
	await expect(trigger.webhookMethods.default.create.call(hookContext(setup))).resolves.toBe(true);
	expect((await subscriptions()).sort()).toEqual([
		['item.created', receiver.url],
		['task.created', receiver.url],
	]);

	const pipeline = (await stagelineApi(stageline, 'GET', '/v1/ext/pipelines')).body[0] as { id: string };
	const stage = (await stagelineApi(stageline, 'GET', `/v1/ext/pipelines/${pipeline.id}/stages`)).body[0] as { id: string };
	const created = await stagelineApi(stageline, 'POST', '/v1/ext/items', { name: 'Live trigger test', pipeline_id: pipeline.id, stage_id: stage.id });
	expect(created.status).toBe(201);
	const delivery = await receiver.waitFor('item.created', created.body.item_id);

	const parameters = { events: setup.events, pipelineId: pipeline.id };
	const accepted: WrittenResponse = {};
	const run = await trigger.webhook.call(webhookContext(delivery, parameters, setup.staticData as IDataObject, accepted));
	expect(accepted).toEqual({});
	expect(run.workflowData?.[0]?.[0]?.json).toMatchObject({ event: 'item.created', item_id: created.body.item_id, name: 'Live trigger test' });

	const tampered = { ...delivery, rawBody: Buffer.from(delivery.rawBody.toString('utf8').replace('Live trigger test', 'Forged name')) };
	const refused: WrittenResponse = {};
	await expect(trigger.webhook.call(webhookContext(tampered, parameters, setup.staticData as IDataObject, refused))).resolves.toEqual({ noWebhookResponse: true });
	expect(refused.status).toBe(401);

	await expect(trigger.webhookMethods.default.checkExists.call(hookContext(setup))).resolves.toBe(true);
	await expect(trigger.webhookMethods.default.delete.call(hookContext(setup))).resolves.toBe(true);
	expect(await subscriptions()).toEqual([]);
	await expect(trigger.webhookMethods.default.checkExists.call(hookContext(setup))).resolves.toBe(false);
});

it('offers All Pipelines, then the pipelines of the key, in the Pipeline dropdown', async () => {
	const context = hookContext(setup) as unknown as ILoadOptionsFunctions;
	const options = await getPipelineFilter.call(context);
	expect(options[0]).toEqual({ name: 'All Pipelines', value: '' });
	expect(options.slice(1).map((o) => o.name)).toEqual(['Sales']);
});

it('with a Pipeline chosen, task events of tasks linked to its items start the workflow, a task without an item does not', async () => {
	const pipeline = (await stagelineApi(stageline, 'GET', '/v1/ext/pipelines')).body[0] as { id: string };
	const stage = (await stagelineApi(stageline, 'GET', `/v1/ext/pipelines/${pipeline.id}/stages`)).body[0] as { id: string };
	const tasks: HookSetup = { ...setup, events: ['task.created'], staticData: {}, parameters: { pipelineId: pipeline.id } };
	await expect(trigger.webhookMethods.default.create.call(hookContext(tasks))).resolves.toBe(true);
	const item = await stagelineApi(stageline, 'POST', '/v1/ext/items', { name: 'Task holder', pipeline_id: pipeline.id, stage_id: stage.id });
	const loose = await stagelineApi(stageline, 'POST', '/v1/ext/tasks', { title: 'Loose task', due_at: '2026-03-01T09:30:00Z', assigned_to: 'ada' });
	const linked = await stagelineApi(stageline, 'POST', '/v1/ext/tasks', { title: 'Linked task', due_at: '2026-03-01T09:30:00Z', assigned_to: 'ada', item_id: item.body.item_id });
	expect([item.status, loose.status, linked.status]).toEqual([201, 201, 201]);
	const delivery = await receiver.waitFor('task.created', linked.body.task_id);
	const run = await trigger.webhook.call(webhookContext(delivery, { events: tasks.events, pipelineId: pipeline.id }, tasks.staticData as IDataObject, {}));
	expect(run.workflowData?.[0]?.[0]?.json).toMatchObject({ event: 'task.created', task_id: linked.body.task_id, item_id: item.body.item_id });
	// One subscription delivers in commit order: the loose task, created first, would have arrived before.
	expect(receiver.deliveries.filter((d) => d.rawBody.toString('utf8').includes(loose.body.task_id))).toEqual([]);
	await expect(trigger.webhookMethods.default.delete.call(hookContext(tasks))).resolves.toBe(true);
});

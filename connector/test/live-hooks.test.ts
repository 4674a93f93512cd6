/**
 * The REST-hook triggers against a REAL Stageline server (test/helpers/live-server.ts), with a local receiver
 * (test/helpers/hook-receiver.ts) standing in for Zapier's hook URLs: subscribe "Updated Item", "Item Moved to
 * Stage", "New Task" and "Completed Task", change an item and complete a task through the connector's own actions,
 * receive the deliveries, and run each trigger's `perform` on them the way Zapier would; "Test trigger"
 * (`performList`) then shows the same runs, read from the events feed (CONTRACT "Events feed").
 * Its own server (and key) keeps the request budget apart from live.test.ts; about 25 requests in all.
 */
import { ItemChangedEventSchema, TaskSchema, WebhookSubscriptionCreatedSchema, type WebhookSubscriptionCreated } from '@stageline/shared';
import { perform as createItem } from '../src/creates/create-item';
import { perform as createTask } from '../src/creates/create-task';
import { perform as updateItem } from '../src/creates/update-item';
import { perform as updateTask } from '../src/creates/update-task';
import * as itemStageChanged from '../src/triggers/item-stage-changed';
import * as itemUpdated from '../src/triggers/item-updated';
import { listPipelines } from '../src/triggers/pipeline-list';
import { listStages } from '../src/triggers/stage-list';
import * as taskCompleted from '../src/triggers/task-completed';
import * as taskCreated from '../src/triggers/task-created';
import type { RestHookOperations } from '../src/triggers/rest-hook';
import { appTester } from './helpers/app';
import { receivedDelivery } from './helpers/deliveries';
import { startHookReceiver, type Delivery, type HookReceiver } from './helpers/hook-receiver';
import { startLiveServer, type LiveServer } from './helpers/live-server';

let server: LiveServer;
let receiver: HookReceiver;
let authData: { api_key: string; server_url: string };
let pipelineId: string;
let stages: Record<string, string>;

/** Subscriptions made by the tests, removed in afterAll whatever happened. */
const subscriptions: { unsubscribe: RestHookOperations<unknown>['performUnsubscribe']; id: string }[] = [];

/** Subscribes `hooks.performSubscribe` to the receiver's URL `name` (with the step's inputs) and records it. */
async function subscribe(
  hooks: Pick<RestHookOperations<unknown>, 'performSubscribe' | 'performUnsubscribe'>,
  name: string,
  inputData: Record<string, string> = {},
): Promise<WebhookSubscriptionCreated> {
  const subscription = WebhookSubscriptionCreatedSchema.parse(
    await appTester(hooks.performSubscribe, { authData, targetUrl: receiver.urlFor(name), inputData }),
  );
  subscriptions.push({ unsubscribe: hooks.performUnsubscribe, id: subscription.id });
  return subscription;
}

/** The delivery body as a record. */
function body(delivery: Delivery): Record<string, unknown> {
  return delivery.body as Record<string, unknown>;
}

beforeAll(async () => {
  [server, receiver] = await Promise.all([startLiveServer(), startHookReceiver()]);
  authData = { api_key: server.apiKey, server_url: server.url };
  const pipelines = await appTester(listPipelines, { authData });
  pipelineId = pipelines.find((p) => p.name === 'Sales')!.id;
  const list = await appTester(listStages, { authData, inputData: { pipeline_id: pipelineId } });
  stages = Object.fromEntries(list.map((s) => [s.name, s.id]));
}, 120_000);

afterAll(async () => {
  try {
    for (const { unsubscribe, id } of subscriptions)
      await appTester(unsubscribe, { authData, subscribeData: { id } }).catch(() => undefined);
  } finally {
    await receiver?.close();
    await server?.stop();
  }
});

describe('Updated Item and Item Moved to Stage on a real server', () => {
  test('each update of an item triggers once with id "<item_id>:<version>"; stage moves only into the chosen stage', async () => {
    const updates = await subscribe(itemUpdated, 'updated');
    expect(updates.event).toBe('item.updated');
    const moves = await subscribe(itemStageChanged, 'moved-to-proposal', { pipeline_id: pipelineId, stage_id: stages.Proposal! });
    expect(moves.event).toBe('item.stage_changed');
    const stepInput = { pipeline_id: pipelineId, stage_id: stages.Proposal! };

    const created = await appTester(createItem, {
      authData,
      inputData: { pipeline_id: pipelineId, stage_id: stages.Lead, name: 'Acme: 10 seats' },
    });
    const renamed = await appTester(updateItem, {
      authData,
      inputData: { item_id: created.item_id, name: 'Acme: 50 seats', version: '1' },
    });
    const qualified = await appTester(updateItem, {
      authData,
      inputData: { item_id: created.item_id, pipeline_id: pipelineId, stage_id: stages.Qualified },
    });
    const proposal = await appTester(updateItem, {
      authData,
      inputData: { item_id: created.item_id, pipeline_id: pipelineId, stage_id: stages.Proposal },
    });
    expect([renamed.version, qualified.version, proposal.version]).toEqual([2, 3, 4]);

    // item.updated: one delivery per update, in order.
    const ofItem = (d: Delivery) => body(d).item_id === created.item_id;
    const last = await receiver.waitFor('updated', (d) => ofItem(d) && body(d).version === 4);
    const delivered = receiver.deliveries.filter((d) => d.path === '/hooks/updated' && ofItem(d));
    expect(delivered.map((d) => d.headers['x-webhook-event'])).toEqual(['item.updated', 'item.updated', 'item.updated']);
    expect(last.headers['webhook-id']).toEqual(expect.any(String));

    const runs = [];
    for (const d of delivered) {
      expect(ItemChangedEventSchema.parse(d.body)).toBeTruthy();
      runs.push(...(await appTester(itemUpdated.perform, { authData, inputData: {}, ...receivedDelivery(d, updates) })));
    }
    expect(runs.map((r) => r.id)).toEqual([`${created.item_id}:2`, `${created.item_id}:3`, `${created.item_id}:4`]);
    expect(runs[0]).toMatchObject({
      name: 'Acme: 50 seats',
      stage: 'Lead',
      changed_fields: ['name'],
      previous: { stage: 'Lead', status: 'Open' },
    });
    expect(runs[1]).toMatchObject({ stage: 'Qualified', status: 'Open', previous: { stage: 'Lead', status: 'Open' } });
    expect(runs[1]!.changed_fields).toContain('stage');
    expect(runs[2]).toMatchObject({ stage: 'Proposal', previous: { stage: 'Qualified', status: 'Open' } });

    // item.stage_changed: the rename sent none; the subscription's filter (pipeline and stage Proposal, CONTRACT
    // "Subscription filters") lets only the move into Proposal through: the move into Qualified is never delivered.
    await receiver.waitFor('moved-to-proposal', (d) => ofItem(d) && body(d).version === 4);
    const moved = receiver.deliveries.filter((d) => d.path === '/hooks/moved-to-proposal' && ofItem(d));
    expect(moved.map((d) => [d.headers['x-webhook-event'], body(d).stage])).toEqual([['item.stage_changed', 'Proposal']]);
    const stageRuns = [];
    for (const d of moved)
      stageRuns.push(
        ...(await appTester(itemStageChanged.perform, { authData, inputData: stepInput, ...receivedDelivery(d, moves) })),
      );
    expect(stageRuns).toEqual([
      expect.objectContaining({
        id: `${created.item_id}:4`,
        stage: 'Proposal',
        stage_id: stages.Proposal,
        previous: { stage: 'Qualified', status: 'Open' },
      }),
    ]);

    // "Test trigger": the same changes from the events feed, newest first, with the very output and ids of the runs.
    // (The demo company may hold older events of its own: only the newest are these.)
    expect(await appTester(itemUpdated.performList, { authData, inputData: {} })).toEqual([...runs].reverse());
    expect((await appTester(itemUpdated.performList, { authData, inputData: { filter_fields: ['name'] } }))[0]).toEqual(runs[0]);
    expect((await appTester(itemStageChanged.performList, { authData, inputData: stepInput }))[0]).toEqual(stageRuns[0]);
  });
});

describe('New Task and Completed Task on a real server', () => {
  test('a new task triggers once (id = task_id); each completion triggers once (id = "<task_id>:<completed_at>")', async () => {
    const newTasks = await subscribe(taskCreated, 'task-new');
    const completions = await subscribe(taskCompleted, 'task-done');
    expect(completions.event).toBe('task.completed');

    const created = await appTester(createTask, {
      authData,
      inputData: { title: 'Send the proposal', due_at: '2026-03-05T15:00:00Z', assigned_to: 'maria@acme.example', priority: 'high' },
    });
    const newTask = await receiver.waitFor('task-new', (d) => body(d).task_id === created.task_id);
    expect(newTask.headers['x-webhook-event']).toBe('task.created');
    const newRuns = await appTester(taskCreated.perform, { authData, inputData: {}, ...receivedDelivery(newTask, newTasks) });
    expect(newRuns).toEqual([
      expect.objectContaining({ id: created.task_id, task_id: created.task_id, title: 'Send the proposal', is_completed: false }),
    ]);

    const done = await appTester(updateTask, { authData, inputData: { task_id: created.task_id, is_completed: 'yes' } });
    const first = await receiver.waitFor('task-done', (d) => body(d).task_id === created.task_id);
    expect(first.headers['x-webhook-event']).toBe('task.completed');
    expect(TaskSchema.parse(first.body)).toMatchObject({ is_completed: true, completed_at: done.completed_at });

    // Reopen and complete again: a second completion, with its own completed_at.
    await new Promise((r) => setTimeout(r, 20)); // completed_at has millisecond precision
    await appTester(updateTask, { authData, inputData: { task_id: created.task_id, is_completed: 'no' } });
    const redone = await appTester(updateTask, { authData, inputData: { task_id: created.task_id, is_completed: 'yes' } });
    expect(redone.completed_at).not.toBe(done.completed_at);
    const second = await receiver.waitFor(
      'task-done',
      (d) => body(d).task_id === created.task_id && body(d).completed_at === redone.completed_at,
    );

    const runs = [];
    for (const d of [first, second]) {
      runs.push(
        ...(await appTester(taskCompleted.perform, { authData, inputData: {}, ...receivedDelivery(d, completions) })),
      );
    }
    expect(runs.map((r) => r.id)).toEqual([`${created.task_id}:${done.completed_at}`, `${created.task_id}:${redone.completed_at}`]);
    // "Test trigger" shows both completions from the events feed, newest first, as the runs are; New Task its creation.
    expect((await appTester(taskCompleted.performList, { authData, inputData: {} })).slice(0, 2)).toEqual([...runs].reverse());
    expect((await appTester(taskCreated.performList, { authData, inputData: {} }))[0]).toEqual(newRuns[0]);
    expect(runs[1]).toMatchObject({ task_id: created.task_id, title: 'Send the proposal', priority: 'high', is_completed: true });
    // Only completions were delivered to the Completed Task hook (the reopen is a task.updated).
    expect(receiver.deliveries.filter((d) => d.path === '/hooks/task-done').map((d) => d.headers['x-webhook-event'])).toEqual([
      'task.completed',
      'task.completed',
    ]);
  });

  test('unsubscribing removes the subscriptions (a second time finds them gone)', async () => {
    for (const { unsubscribe, id } of subscriptions.splice(0)) {
      expect(await appTester(unsubscribe, { authData, subscribeData: { id } })).toEqual({ id, removed: true });
      expect(await appTester(unsubscribe, { authData, subscribeData: { id } })).toEqual({ id, removed: false });
    }
  });
});

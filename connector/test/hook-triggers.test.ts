/**
 * The REST-hook triggers besides "New Item" (triggers.test.ts): Updated Item, Item Moved to Stage, Item Deleted, New
 * Task, Updated Task, Completed Task and New Note (its own cases in notes.test.ts), against a nock'ed server. What each one subscribes to, the ids Zapier de-duplicates on, the
 * stage filter, and samples (the events feed's recent events of the trigger's event, mapped as deliveries are, else
 * the sample endpoint).
 */
import { App, SALES, SALES_FIELDS, SUPPORT, appTester, authData, feedEvents, item, note, task, thrown } from './helpers/app';
import { signedDelivery } from './helpers/deliveries';
import { api, useNock } from './helpers/nock';
import {
  EVENT_NAMES,
  ItemChangedEventSchema,
  TASK_CHANGE_FIELDS,
  TaskChangedEventSchema,
  TaskSchema,
  createProblem,
  type EventName,
  type ItemChangedEvent,
  type Task,
} from '@stageline/shared';
import type { Bundle, ZObject } from 'zapier-platform-core';
import { ITEM_OUTPUT_FIELDS } from '../src/fields/item-fields';
import * as itemCreated from '../src/triggers/item-created';
import * as itemDeleted from '../src/triggers/item-deleted';
import * as itemStageChanged from '../src/triggers/item-stage-changed';
import * as itemUpdated from '../src/triggers/item-updated';
import * as noteCreated from '../src/triggers/note-created';
import { FEED_SAMPLE_WINDOW } from '../src/triggers/rest-hook';
import * as taskCompleted from '../src/triggers/task-completed';
import * as taskCreated from '../src/triggers/task-created';
import * as taskUpdated from '../src/triggers/task-updated';

useNock();

const TARGET_URL = 'https://hooks.zapier.com/hooks/standard/123/abc/';
/** The Task's output keys as Zapier shows them: every TaskSchema key, `assignee` flattened to its members. */
const TASK_OUTPUT_KEYS = Object.keys(TaskSchema.shape).flatMap((key) =>
  key === 'assignee' ? ['assignee__user_id', 'assignee__name', 'assignee__email'] : [key],
);

/** An item.updated / item.stage_changed payload, as the server delivers it. */
function change(overrides: Partial<ItemChangedEvent> = {}): ItemChangedEvent {
  return {
    ...item({ stage: 'Qualified', stage_id: 'stg-qualified', status: 'Open', status_id: 'sts-q-open', version: 2 }),
    changed_fields: ['stage', 'status'],
    previous: { stage: 'Lead', status: 'Open' },
    ...overrides,
  };
}

/** A completed task, as task.completed delivers it. */
function completed(overrides: Partial<Task> = {}): Task {
  return task({ is_completed: true, completed_at: '2026-03-04T16:20:00.000Z', updated_at: '2026-03-04T16:20:00.000Z', ...overrides });
}

type Output = { id: string } & Record<string, unknown>;

/** The output keys of an item-change trigger after the item fields, for the Sales pipeline (email, deal_value). */
const CHANGE_OUTPUT_KEYS_OF_SALES = [
  'changed_fields',
  'previous__stage',
  'previous__status',
  'email',
  'deal_value',
  'previous__name',
  'previous__contact_id',
  'previous__source',
  'previous__email',
  'previous__deal_value',
];

/** The hook functions of a trigger module, loosely typed so one table can hold item and task triggers. */
type HookFn = (z: ZObject, bundle: Bundle) => Promise<unknown>;
interface HookModule {
  performSubscribe: HookFn;
  performUnsubscribe: HookFn;
  perform: HookFn;
  performList: HookFn;
}
type HookKey = 'item_created' | 'item_updated' | 'item_stage_changed' | 'item_deleted' | 'task_created' | 'task_updated' | 'task_completed' | 'note_created';

/** Every REST-hook trigger: its module, key, event, labels, and a delivery body of its event. */
const HOOKS: { mod: HookModule; key: HookKey; event: EventName; noun: string; label: string; body: object }[] = [
  { mod: itemCreated, key: 'item_created', event: 'item.created', noun: 'Item', label: 'New Item', body: item() },
  { mod: itemUpdated, key: 'item_updated', event: 'item.updated', noun: 'Item', label: 'Updated Item', body: change() },
  { mod: itemStageChanged, key: 'item_stage_changed', event: 'item.stage_changed', noun: 'Item', label: 'Item Moved to Stage', body: change() },
  { mod: itemDeleted, key: 'item_deleted', event: 'item.deleted', noun: 'Item', label: 'Item Deleted', body: { ...item(), deleted_at: '2026-03-09T11:45:00.000Z' } },
  { mod: taskCreated, key: 'task_created', event: 'task.created', noun: 'Task', label: 'New Task', body: task() },
  {
    mod: taskUpdated,
    key: 'task_updated',
    event: 'task.updated',
    noun: 'Task',
    label: 'Updated Task',
    body: { ...task({ priority: 'high' }), changed_fields: ['priority'], previous: { priority: 'none' } },
  },
  { mod: taskCompleted, key: 'task_completed', event: 'task.completed', noun: 'Task', label: 'Completed Task', body: completed() },
  { mod: noteCreated, key: 'note_created', event: 'note.created', noun: 'Note', label: 'New Note', body: note() },
];

/** The feed query `performList` sends for `event` (plus `pipeline_id` when the step names one). */
function feedQuery(event: EventName, extra: Record<string, string> = {}): Record<string, string> {
  return { event, limit: String(FEED_SAMPLE_WINDOW), ...extra };
}

describe.each(HOOKS)('$label ($key): the REST hook plumbing', ({ mod, key, event, noun, label, body }) => {
  const trigger = App.triggers[key];

  test('is an instant trigger, registered and labelled the Zapier way', () => {
    expect(trigger.key).toBe(key);
    expect(trigger.noun).toBe(noun);
    expect(trigger.display.label).toBe(label);
    expect(trigger.display.description).toMatch(/^Triggers when .{20,}/);
    expect(trigger.display.hidden).toBeUndefined();
    const op = trigger.operation as {
      type?: string;
      performSubscribe?: unknown;
      performUnsubscribe?: unknown;
      perform?: unknown;
      performList?: unknown;
    };
    expect(op).toMatchObject({
      type: 'hook',
      performSubscribe: mod.performSubscribe,
      performUnsubscribe: mod.performUnsubscribe,
      perform: mod.perform,
      performList: mod.performList,
    });
    expect(EVENT_NAMES).toContain(event);
  });

  test(`turning the Zap on subscribes the Zap URL to ${event}`, async () => {
    const subscription = {
      id: 'wh-9',
      target_url: TARGET_URL,
      event,
      created_at: '2026-03-01T09:00:00.000Z',
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    };
    api().post('/v1/ext/webhooks', { target_url: TARGET_URL, event }).reply(201, subscription);
    expect(await appTester(mod.performSubscribe, { authData, targetUrl: TARGET_URL })).toEqual(subscription);
  });

  test('turning the Zap off deletes the subscription; one already gone (404) is fine', async () => {
    api().delete('/v1/ext/webhooks/wh-9').reply(204);
    expect(await appTester(mod.performUnsubscribe, { authData, subscribeData: { id: 'wh-9' } })).toEqual({ id: 'wh-9', removed: true });
    api().delete('/v1/ext/webhooks/wh-9').reply(404, createProblem('not_found', 'Webhook "wh-9" was not found.'));
    expect(await appTester(mod.performUnsubscribe, { authData, subscribeData: { id: 'wh-9' } })).toEqual({ id: 'wh-9', removed: false });
  });

  test('unsubscribing without subscribeData says so instead of calling the API', async () => {
    const error = await thrown(appTester(mod.performUnsubscribe, { authData, subscribeData: {} as { id: string } }));
    expect(error.message).toContain('no Stageline subscription to remove');
  });

  test(`samples: the feed's recent ${event} events, with the very output and id a delivery of them gets`, async () => {
    api().get('/v1/ext/events').query(feedQuery(event)).reply(200, feedEvents(event, [body]));
    const samples = await appTester(mod.performList, { authData, inputData: {} });
    expect(samples).toEqual(await appTester(mod.perform, { authData, inputData: {}, ...signedDelivery(body) }));
    expect(samples).toHaveLength(1);
  });

  test('samples with a Pipeline chosen: the feed filters by it (item, task and note events alike)', async () => {
    api().get('/v1/ext/events').query(feedQuery(event, { pipeline_id: SALES.id })).reply(200, feedEvents(event, [body]));
    expect(await appTester(mod.performList, { authData, inputData: { pipeline_id: SALES.id } })).toHaveLength(1);
  });

  test('samples: with no event retained, or a server without the feed (404), the sample endpoint', async () => {
    for (const [status, reply] of [
      [200, []],
      [404, createProblem('not_found', 'Not found.')],
    ] as const) {
      api().get('/v1/ext/events').query(true).reply(status, reply);
      api().get(`/v1/ext/webhooks/sample/${noun.toLowerCase()}s`).query(true).reply(200, body);
      const samples = (await appTester(mod.performList, { authData, inputData: {} })) as Output[];
      expect(samples).toHaveLength(1);
    }
  });

  test('a request that is not the event resource is ignored', async () => {
    for (const body of [{ hello: 'world' }, 'text', null]) {
      expect(await appTester(mod.perform, { authData, inputData: {}, ...signedDelivery(body) })).toEqual([]);
    }
  });

  test('the static sample has an id and every built-in output field (previous values: those of its changed fields)', () => {
    const sample = trigger.operation.sample as Record<string, unknown>;
    const changed = new Set((sample.changed_fields as string[] | undefined) ?? []);
    const fields = (trigger.operation.outputFields ?? []).filter((f): f is { key: string } => typeof f === 'object');
    for (const { key: fieldKey } of fields) {
      const [outer, inner] = fieldKey.split('__');
      // `previous` holds only the changed fields (and an item's stage and status), as a real delivery does
      if (outer === 'previous' && !changed.has(inner!) && inner !== 'stage' && inner !== 'status') continue;
      const value = inner === undefined ? sample[outer!] : (sample[outer!] as Record<string, unknown> | undefined)?.[inner];
      expect({ field: fieldKey, present: value !== undefined }).toEqual({ field: fieldKey, present: true });
    }
    for (const name of changed) expect((sample.previous as Record<string, unknown>)[name]).toBeDefined();
  });
});

describe('rest-hook: the other resource is not a delivery', () => {
  test('an item posted to a task hook, and a task posted to an item hook, are ignored', async () => {
    expect(await appTester(taskCreated.perform, { authData, inputData: {}, ...signedDelivery(item()) })).toEqual([]);
    expect(await appTester(itemUpdated.perform, { authData, inputData: {}, ...signedDelivery(task()) })).toEqual([]);
  });

  test('a feed error other than 403 or 404 is reported, not papered over with the sample', async () => {
    api().get('/v1/ext/events').query(true).reply(402, createProblem('subscription_inactive', 'The subscription is inactive.'));
    const error = await thrown(appTester(taskCreated.performList, { authData, inputData: {} }));
    expect(error.status).toBe(402);
  });
});

describe('Updated Item (item_updated)', () => {
  test('a delivery becomes one run with id "<item_id>:<version>", keeping changed_fields and previous', async () => {
    const delivered = change({ item_id: 'itm-7', version: 3 });
    const runs = (await appTester(itemUpdated.perform, { authData, inputData: {}, ...signedDelivery(delivered) })) as Output[];
    expect(runs).toEqual([{ ...delivered, id: 'itm-7:3' }]);
    expect(runs[0]).toMatchObject({ changed_fields: ['stage', 'status'], previous: { stage: 'Lead', status: 'Open' } });
  });

  test('two updates of one item get two ids (both trigger); a redelivery of the same update keeps its id', async () => {
    const first = (await appTester(itemUpdated.perform, { authData, inputData: {}, ...signedDelivery(change({ version: 2 })) })) as Output[];
    const second = (await appTester(itemUpdated.perform, {
      authData,
      inputData: {},
      ...signedDelivery(change({ version: 3, changed_fields: ['name'] })),
    })) as Output[];
    const again = (await appTester(itemUpdated.perform, {
      authData,
      inputData: {},
      ...signedDelivery(change({ version: 3, changed_fields: ['name'] })),
    })) as Output[];
    expect(first[0]!.id).toBe('itm-1:2');
    expect(second[0]!.id).toBe('itm-1:3');
    expect(again[0]!.id).toBe(second[0]!.id);
  });

  test('samples: the newest real changes from the feed (their changed_fields and previous), same id rule', async () => {
    const renamed = change({ item_id: 'itm-3', version: 5, name: 'Acme: 60 seats', changed_fields: ['name'], previous: { stage: 'Qualified', status: 'Open', name: 'Acme: 50 seats' } });
    api()
      .get('/v1/ext/events')
      .query(feedQuery('item.updated'))
      .reply(200, feedEvents('item.updated', [renamed, change({ item_id: 'itm-2' })]));
    const samples = (await appTester(itemUpdated.performList, { authData, inputData: {} })) as Output[];
    expect(samples.map((s) => s.id)).toEqual(['itm-3:5', 'itm-2:2']);
    expect(samples[0]).toMatchObject({ item_id: 'itm-3', changed_fields: ['name'], previous: { name: 'Acme: 50 seats' } });
    expect(ItemChangedEventSchema.parse(samples[0])).toBeTruthy();
  });

  test('samples with "Only when these fields change": only changes of those fields, else the sample', async () => {
    const renamed = change({ item_id: 'itm-3', version: 5, changed_fields: ['name'], previous: { stage: 'Qualified', status: 'Open', name: 'Old' } });
    const events = feedEvents('item.updated', [change({ item_id: 'itm-4', version: 6 }), renamed]);
    api().get('/v1/ext/events').query(feedQuery('item.updated')).reply(200, events);
    const samples = (await appTester(itemUpdated.performList, { authData, inputData: { filter_fields: ['name'] } })) as Output[];
    expect(samples.map((s) => s.id)).toEqual(['itm-3:5']);
    api().get('/v1/ext/events').query(feedQuery('item.updated')).reply(200, [events[0]]);
    api().get('/v1/ext/webhooks/sample/items').reply(200, item({ item_id: 'sample-item' }));
    expect(((await appTester(itemUpdated.performList, { authData, inputData: { filter_fields: ['name'] } })) as Output[]).map((s) => s.id)).toEqual(['sample-item:1']);
  });

  test('samples with no change retained: the sample endpoint, one object, same id rule', async () => {
    api().get('/v1/ext/events').query(feedQuery('item.updated')).reply(200, []);
    api()
      .get('/v1/ext/webhooks/sample/items')
      .reply(200, item({ item_id: 'sample-item', version: 1 }));
    const samples = (await appTester(itemUpdated.performList, { authData, inputData: {} })) as Output[];
    expect(samples).toEqual([expect.objectContaining({ id: 'sample-item:1', item_id: 'sample-item', changed_fields: [] })]);
  });

  test('output fields: item fields, what changed, the previous stage and status, custom fields, then every other previous value', async () => {
    api().get('/v1/ext/pipelines').reply(200, [SALES]);
    api().get(`/v1/ext/pipelines/${SALES.id}/fields`).reply(200, SALES_FIELDS);
    const fields = (await appTester(App.triggers.item_updated.operation.outputFields as never, { authData, inputData: {} })) as {
      key: string;
      label: string;
      list?: boolean;
    }[];
    expect(fields.map((f) => f.key)).toEqual([...ITEM_OUTPUT_FIELDS.map((f) => f.key), ...CHANGE_OUTPUT_KEYS_OF_SALES]);
    expect(fields.find((f) => f.key === 'previous__deal_value')).toMatchObject({ label: 'Previous Deal value', type: 'number' });
    expect(fields.find((f) => f.key === 'previous__contact_id')).toMatchObject({ label: 'Previous Contact ID' });
    expect(fields.find((f) => f.key === 'id')!.label).toMatch(/Version/);
    expect(fields.find((f) => f.key === 'changed_fields')).toMatchObject({ label: 'Changed Fields', list: true });
    expect(fields.find((f) => f.key === 'previous__stage')).toMatchObject({ label: 'Previous Stage' });
    expect(fields.find((f) => f.key === 'previous__status')).toMatchObject({ label: 'Previous Status' });
  });

  test('the static sample is a valid item.updated payload plus id', () => {
    const { id, ...payload } = App.triggers.item_updated.operation.sample as Output;
    expect(ItemChangedEventSchema.parse(payload)).toBeTruthy();
    expect(id).toBe(`${payload.item_id as string}:${payload.version as number}`);
  });
});

describe('Item Moved to Stage (item_stage_changed)', () => {
  const op = App.triggers.item_stage_changed.operation;

  test('inputs: an optional Pipeline and a Stage dropdown depending on it', () => {
    const [pipeline, stage] = op.inputFields as unknown as Record<string, unknown>[];
    expect(pipeline).toMatchObject({ key: 'pipeline_id', required: false, dynamic: 'pipeline_list.id.name' });
    expect(stage).toMatchObject({
      key: 'stage_id',
      label: 'Stage',
      required: false,
      dynamic: 'stage_list.id.name',
      dependsOn: ['pipeline_id'],
      helpText: 'Only trigger when an item moves into this stage. Leave empty for any stage.',
    });
  });

  test('without a stage chosen, every move triggers, with id "<item_id>:<version>"', async () => {
    const delivered = change({ item_id: 'itm-5', version: 4 });
    expect(await appTester(itemStageChanged.perform, { authData, inputData: {}, ...signedDelivery(delivered) })).toEqual([
      { ...delivered, id: 'itm-5:4' },
    ]);
  });

  test('with a stage chosen, only moves INTO that stage trigger', async () => {
    const inputData = { pipeline_id: SALES.id, stage_id: 'stg-proposal' };
    const intoQualified = change({ stage: 'Qualified', stage_id: 'stg-qualified' });
    const intoProposal = change({
      stage: 'Proposal',
      stage_id: 'stg-proposal',
      previous: { stage: 'Qualified', status: 'Open' },
      version: 3,
    });
    const fromProposal = change({ stage: 'Closed', stage_id: 'stg-closed', previous: { stage: 'Proposal', status: 'Open' }, version: 4 });
    expect(await appTester(itemStageChanged.perform, { authData, inputData, ...signedDelivery(intoQualified) })).toEqual([]);
    expect(await appTester(itemStageChanged.perform, { authData, inputData, ...signedDelivery(fromProposal) })).toEqual([]);
    expect(await appTester(itemStageChanged.perform, { authData, inputData, ...signedDelivery(intoProposal) })).toEqual([
      { ...intoProposal, id: 'itm-1:3' },
    ]);
  });

  test('with only a pipeline chosen, moves in other pipelines do not trigger', async () => {
    const inputData = { pipeline_id: SUPPORT.id, stage_id: '' };
    expect(await appTester(itemStageChanged.perform, { authData, inputData, ...signedDelivery(change()) })).toEqual([]);
    const own = change({ pipeline_id: SUPPORT.id, pipeline: 'Support' });
    expect(await appTester(itemStageChanged.perform, { authData, inputData, ...signedDelivery(own) })).toEqual([{ ...own, id: 'itm-1:2' }]);
  });

  test('samples: the newest moves into the chosen stage, from the feed of the chosen pipeline', async () => {
    const intoProposal = change({ item_id: 'itm-9', stage: 'Proposal', stage_id: 'stg-proposal', previous: { stage: 'Qualified', status: 'Open' }, version: 6 });
    api()
      .get('/v1/ext/events')
      .query(feedQuery('item.stage_changed', { pipeline_id: SALES.id }))
      .reply(200, feedEvents('item.stage_changed', [change({ item_id: 'itm-10', version: 7 }), intoProposal]));
    const samples = (await appTester(itemStageChanged.performList, {
      authData,
      inputData: { pipeline_id: SALES.id, stage_id: 'stg-proposal' },
    })) as Output[];
    expect(samples).toEqual([expect.objectContaining({ id: 'itm-9:6', stage: 'Proposal', previous: { stage: 'Qualified', status: 'Open' } })]);
  });

  test('samples with no move into that stage retained: the sample endpoint', async () => {
    api()
      .get('/v1/ext/events')
      .query(feedQuery('item.stage_changed', { pipeline_id: SALES.id }))
      .reply(200, feedEvents('item.stage_changed', [change()]));
    api()
      .get('/v1/ext/webhooks/sample/items')
      .reply(200, item({ item_id: 'sample-item' }));
    const samples = (await appTester(itemStageChanged.performList, {
      authData,
      inputData: { pipeline_id: SALES.id, stage_id: 'stg-closed' },
    })) as Output[];
    expect(samples.map((s) => s.id)).toEqual(['sample-item:1']);
  });

  test('a Stage without its Pipeline (a mapped value) is refused before anything is subscribed', async () => {
    const error = await thrown(appTester(itemStageChanged.performSubscribe, { authData, targetUrl: TARGET_URL, inputData: { stage_id: 'stg-closed' } }));
    expect(error).toMatchObject({ code: 'InvalidData', message: expect.stringContaining('Choose the Pipeline of the Stage') });
  });

  test("output fields with a Pipeline chosen: item change fields plus that pipeline's custom fields", async () => {
    api().get(`/v1/ext/pipelines/${SALES.id}/fields`).reply(200, SALES_FIELDS);
    const fields = (await appTester(op.outputFields as never, { authData, inputData: { pipeline_id: SALES.id } })) as { key: string }[];
    expect(fields.slice(-CHANGE_OUTPUT_KEYS_OF_SALES.length).map((f) => f.key)).toEqual(CHANGE_OUTPUT_KEYS_OF_SALES);
  });
});

describe('New Task (task_created)', () => {
  test('a delivery becomes one run with id = task_id', async () => {
    const delivered = task({ task_id: 'tsk-42' });
    expect(await appTester(taskCreated.perform, { authData, inputData: {}, ...signedDelivery(delivered) })).toEqual([
      { id: 'tsk-42', ...delivered },
    ]);
  });

  test('samples: the newest task.created events, with ids', async () => {
    api()
      .get('/v1/ext/events')
      .query(feedQuery('task.created'))
      .reply(200, feedEvents('task.created', [task({ task_id: 'tsk-3' }), task({ task_id: 'tsk-2' })]));
    const samples = (await appTester(taskCreated.performList, { authData, inputData: {} })) as Output[];
    expect(samples.map((s) => s.id)).toEqual(['tsk-3', 'tsk-2']);
  });

  test('samples with no task.created retained, or a key that may not read tasks: the sample task', async () => {
    api().get('/v1/ext/events').query(feedQuery('task.created')).reply(200, []);
    api()
      .get('/v1/ext/webhooks/sample/tasks')
      .reply(200, task({ task_id: 'sample-task' }));
    expect(((await appTester(taskCreated.performList, { authData, inputData: {} })) as Output[]).map((s) => s.id)).toEqual(['sample-task']);

    api()
      .get('/v1/ext/events')
      .query(feedQuery('task.created'))
      .reply(403, createProblem('insufficient_scope', 'This API key lacks the items:read or tasks:read scope.'));
    api()
      .get('/v1/ext/webhooks/sample/tasks')
      .reply(200, task({ task_id: 'sample-task' }));
    expect(((await appTester(taskCreated.performList, { authData, inputData: {} })) as Output[]).map((s) => s.id)).toEqual(['sample-task']);
  });

  test("output fields: id plus every field of the contract's Task, labelled", () => {
    const fields = App.triggers.task_created.operation.outputFields as { key: string; label: string }[];
    expect(fields.map((f) => f.key)).toEqual(['id', ...TASK_OUTPUT_KEYS]);
    for (const field of fields) expect(field.label).toMatch(/^[A-Z]/);
  });

  test('the static sample is a valid Task plus id', () => {
    const { id, ...payload } = App.triggers.task_created.operation.sample as Output;
    expect(TaskSchema.parse(payload)).toBeTruthy();
    expect(id).toBe(payload.task_id);
  });
});

describe('Completed Task (task_completed)', () => {
  test('a delivery becomes one run with id "<task_id>:<completed_at>"', async () => {
    const delivered = completed({ task_id: 'tsk-8' });
    expect(await appTester(taskCompleted.perform, { authData, inputData: {}, ...signedDelivery(delivered) })).toEqual([
      { ...delivered, id: 'tsk-8:2026-03-04T16:20:00.000Z' },
    ]);
  });

  test('completed, reopened and completed again: two runs with different ids', async () => {
    const first = (await appTester(taskCompleted.perform, { authData, inputData: {}, ...signedDelivery(completed()) })) as Output[];
    const again = completed({ completed_at: '2026-03-09T10:00:00.000Z', updated_at: '2026-03-09T10:00:00.000Z' });
    const second = (await appTester(taskCompleted.perform, { authData, inputData: {}, ...signedDelivery(again) })) as Output[];
    expect(first[0]!.id).not.toBe(second[0]!.id);
    expect(second[0]!.id).toBe('tsk-1:2026-03-09T10:00:00.000Z');
  });

  test('samples: the newest task.completed events, same id rule (a task completed twice shows twice)', async () => {
    const again = completed({ task_id: 'tsk-5', completed_at: '2026-03-09T10:00:00.000Z', updated_at: '2026-03-09T10:00:00.000Z' });
    api()
      .get('/v1/ext/events')
      .query(feedQuery('task.completed'))
      .reply(200, feedEvents('task.completed', [again, completed({ task_id: 'tsk-5' })]));
    const samples = (await appTester(taskCompleted.performList, { authData, inputData: {} })) as Output[];
    expect(samples.map((s) => s.id)).toEqual(['tsk-5:2026-03-09T10:00:00.000Z', 'tsk-5:2026-03-04T16:20:00.000Z']);
  });

  test('samples with no completion retained: the sample task, shown completed', async () => {
    api().get('/v1/ext/events').query(feedQuery('task.completed')).reply(200, []);
    api()
      .get('/v1/ext/webhooks/sample/tasks')
      .reply(200, task({ task_id: 'sample-task', updated_at: '2026-03-02T08:00:00.000Z' }));
    const samples = (await appTester(taskCompleted.performList, { authData, inputData: {} })) as Output[];
    expect(samples).toEqual([
      expect.objectContaining({ id: 'sample-task:2026-03-02T08:00:00.000Z', is_completed: true, completed_at: '2026-03-02T08:00:00.000Z' }),
    ]);
    const { id: _id, ...payload } = samples[0]!;
    expect(TaskSchema.parse(payload)).toBeTruthy();
  });

  test('output fields: the Task fields, with id explained, then what changed and every previous value, labelled', () => {
    const fields = App.triggers.task_completed.operation.outputFields as { key: string; label: string }[];
    expect(fields.map((f) => f.key)).toEqual([
      'id',
      ...TASK_OUTPUT_KEYS,
      'changed_fields',
      ...TASK_CHANGE_FIELDS.map((key) => `previous__${key}`),
    ]);
    expect(fields[0]!.label).toMatch(/Completed At/);
    expect(fields.find((f) => f.key === 'previous__due_at')).toMatchObject({ label: 'Previous Due At', type: 'datetime' });
    expect(fields.find((f) => f.key === 'previous__is_completed')).toMatchObject({ label: 'Previous Completed', type: 'boolean' });
  });

  test('the static sample is a valid completed Task plus its completion id', () => {
    const { id, ...payload } = App.triggers.task_completed.operation.sample as Output;
    const parsed = TaskSchema.parse(payload);
    expect(parsed.is_completed).toBe(true);
    expect(id).toBe(`${parsed.task_id}:${parsed.completed_at}`);
  });
});

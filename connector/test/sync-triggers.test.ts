/**
 * Issue 25 in the triggers, against a nock'ed server: each trigger's optional Pipeline / Stage / "Only when these
 * fields change" inputs become the subscription's `filter` (CONTRACT "Subscription filters"), checked with the
 * contract's WebhookSubscribeSchema; "Item Deleted" and "Updated Task"; previous values pass through.
 */
import { ItemDeletedEventSchema, TaskChangedEventSchema, WebhookSubscribeSchema, type TaskChangedEvent } from '@stageline/shared';
import { App, SALES, SALES_FIELDS, SUPPORT, appTester, authData, feedEvents, item, task, thrown } from './helpers/app';
import { signedDelivery } from './helpers/deliveries';
import { api, useNock } from './helpers/nock';
import { hookFilterOf, passesHookFilter } from '../src/triggers/hook-filter';
import * as itemCreated from '../src/triggers/item-created';
import * as itemDeleted from '../src/triggers/item-deleted';
import * as itemUpdated from '../src/triggers/item-updated';
import * as taskCompleted from '../src/triggers/task-completed';
import { FEED_SAMPLE_WINDOW } from '../src/triggers/rest-hook';
import * as taskUpdated from '../src/triggers/task-updated';

useNock();

const TARGET_URL = 'https://hooks.zapier.com/hooks/standard/123/abc/';

/** Mocks POST /webhooks; resolves the body it received (after checking it against the contract). */
function subscribeBody(): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    api()
      .post('/v1/ext/webhooks')
      .reply(201, (_uri, body) => {
        const parsed = body as Record<string, unknown>;
        expect(WebhookSubscribeSchema.safeParse(parsed).success).toBe(true);
        resolve(parsed);
        return { id: 'wh-1', target_url: TARGET_URL, event: parsed.event, created_at: '2026-03-01T09:00:00.000Z', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', filter: parsed.filter ?? null };
      });
  });
}

type Field = { key: string; list?: boolean; required?: boolean; choices?: { value: string; label: string }[]; dependsOn?: string[] };

describe('subscription filters from the trigger inputs', () => {
  test('Updated Item: pipeline, stage and the chosen fields are the filter', async () => {
    const sent = subscribeBody();
    await appTester(itemUpdated.performSubscribe, {
      authData,
      targetUrl: TARGET_URL,
      inputData: { pipeline_id: SALES.id, stage_id: 'stg-lead', filter_fields: ['deal_value', 'stage', 'deal_value'] },
    });
    expect(await sent).toEqual({
      target_url: TARGET_URL,
      event: 'item.updated',
      filter: { pipeline_id: SALES.id, stage_id: 'stg-lead', fields: ['deal_value', 'stage'] },
    });
  });

  test('nothing chosen: no filter member at all (every event, as before)', async () => {
    const sent = subscribeBody();
    await appTester(itemUpdated.performSubscribe, { authData, targetUrl: TARGET_URL, inputData: { pipeline_id: '', filter_fields: [] } });
    expect(await sent).toEqual({ target_url: TARGET_URL, event: 'item.updated' });
  });

  test('New Item and Item Deleted: pipeline and stage; a fields value is never sent for events that cannot filter on it', async () => {
    let sent = subscribeBody();
    await appTester(itemCreated.performSubscribe, { authData, targetUrl: TARGET_URL, inputData: { pipeline_id: SALES.id, filter_fields: ['name'] } });
    expect(await sent).toEqual({ target_url: TARGET_URL, event: 'item.created', filter: { pipeline_id: SALES.id } });
    sent = subscribeBody();
    await appTester(itemDeleted.performSubscribe, { authData, targetUrl: TARGET_URL, inputData: { pipeline_id: SALES.id, stage_id: 'stg-won' } });
    expect(await sent).toEqual({ target_url: TARGET_URL, event: 'item.deleted', filter: { pipeline_id: SALES.id, stage_id: 'stg-won' } });
  });

  test('task triggers: the pipeline (tasks linked to its items); a stage is never sent for task events', async () => {
    let sent = subscribeBody();
    await appTester(taskCompleted.performSubscribe, { authData, targetUrl: TARGET_URL, inputData: { pipeline_id: SUPPORT.id, stage_id: 'stg-x' } });
    expect(await sent).toEqual({ target_url: TARGET_URL, event: 'task.completed', filter: { pipeline_id: SUPPORT.id } });
    sent = subscribeBody();
    await appTester(taskUpdated.performSubscribe, { authData, targetUrl: TARGET_URL, inputData: { filter_fields: 'due_at, priority' } });
    expect(await sent).toEqual({ target_url: TARGET_URL, event: 'task.updated', filter: { fields: ['due_at', 'priority'] } });
  });

  test('a different filter is a different Idempotency-Key: changing the inputs never replays the old subscription', async () => {
    const keys: string[] = [];
    for (const fields of [['name'], ['deal_value']]) {
      api()
        .post('/v1/ext/webhooks')
        .reply(201, function () {
          keys.push(String(this.req.headers['idempotency-key']));
          return { id: `wh-${keys.length}`, target_url: TARGET_URL, event: 'item.updated', created_at: '2026-03-01T09:00:00.000Z', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', filter: { fields } };
        });
      await appTester(itemUpdated.performSubscribe, { authData, targetUrl: TARGET_URL, inputData: { filter_fields: fields } });
    }
    expect(keys[0]).not.toBe(keys[1]);
  });

  test('deliveries the filter excludes (a subscription made before the inputs changed) start no run', async () => {
    const inputData = { pipeline_id: SALES.id, filter_fields: ['deal_value'] };
    const renamed = { ...item({ version: 3 }), changed_fields: ['name'], previous: { stage: 'Lead', status: 'Open', name: 'Old' } };
    const repriced = { ...item({ version: 4 }), changed_fields: ['deal_value'], previous: { stage: 'Lead', status: 'Open', deal_value: 900 } };
    expect(await appTester(itemUpdated.perform, { authData, inputData, ...signedDelivery(renamed) })).toEqual([]);
    expect(await appTester(itemUpdated.perform, { authData, inputData, ...signedDelivery(repriced) })).toEqual([{ ...repriced, id: 'itm-1:4' }]);
  });

  test('hookFilterOf / passesHookFilter: the pure rules', () => {
    expect(hookFilterOf('item.stage_changed', {})).toBeUndefined();
    expect(hookFilterOf('task.created', { filter_fields: ['title'] })).toBeUndefined();
    expect(hookFilterOf('item.updated', { filter_fields: ['{{123__field}}', ' name '] })).toEqual({ fields: ['name'] });
    const filter = { pipeline_id: 'p1', stage_id: 's1', fields: ['name'] };
    expect(passesHookFilter('item.updated', { pipeline_id: 'p1', stage_id: 's1', changed_fields: ['name'] }, filter)).toBe(true);
    expect(passesHookFilter('item.updated', { pipeline_id: 'p2', stage_id: 's1', changed_fields: ['name'] }, filter)).toBe(false);
    expect(passesHookFilter('item.updated', { pipeline_id: 'p1', stage_id: 's2', changed_fields: ['name'] }, filter)).toBe(false);
    // a listed item as a sample does not know its last change: it is not filtered on fields
    expect(passesHookFilter('item.updated', { pipeline_id: 'p1', stage_id: 's1', changed_fields: [] }, filter)).toBe(true);
    // a task tells no pipeline: the server applies that part
    expect(passesHookFilter('task.updated', { changed_fields: ['title'] }, { pipeline_id: 'p1', fields: ['title'] })).toBe(true);
  });
});

describe('the filter inputs', () => {
  test('Updated Item: optional Pipeline, Stage depending on it, and a field list of built-ins plus the pipeline\'s custom fields', async () => {
    api().get(`/v1/ext/pipelines/${SALES.id}/fields`).reply(200, SALES_FIELDS);
    const fields = (await appTester(App.triggers.item_updated.operation.inputFields as never, { authData, inputData: { pipeline_id: SALES.id } })) as Field[];
    expect(fields.map((f) => [f.key, f.required])).toEqual([
      ['pipeline_id', false],
      ['stage_id', false],
      ['filter_fields', false],
    ]);
    expect(fields[1]!.dependsOn).toEqual(['pipeline_id']);
    const list = fields[2]!;
    expect(list.list).toBe(true);
    expect(list.choices!.map((c) => [c.value, c.label])).toEqual([
      ['name', 'Name'],
      ['stage', 'Stage'],
      ['status', 'Status'],
      ['contact_id', 'Contact ID'],
      ['source', 'Source'],
      ['email', 'Email'],
      ['deal_value', 'Deal value'],
    ]);
  });

  test('Updated Task: Pipeline and the task fields; no Stage (task events cannot filter on one)', async () => {
    const fields = (await appTester(App.triggers.task_updated.operation.inputFields as never, { authData, inputData: {} })) as Field[];
    expect(fields.map((f) => f.key)).toEqual(['pipeline_id', 'filter_fields']);
    expect(fields[1]!.choices!.find((c) => c.value === 'due_at')).toMatchObject({ label: 'Due At' });
  });

  test('New Item, Item Moved to Stage, Item Deleted: Pipeline and Stage; New Task, Completed Task: Pipeline', async () => {
    for (const [key, expected] of [
      ['item_created', ['pipeline_id', 'stage_id']],
      ['item_stage_changed', ['pipeline_id', 'stage_id']],
      ['item_deleted', ['pipeline_id', 'stage_id']],
      ['task_created', ['pipeline_id']],
      ['task_completed', ['pipeline_id']],
    ] as const) {
      const fields = (await appTester(App.triggers[key].operation.inputFields as never, { authData, inputData: {} })) as Field[];
      expect({ key, fields: fields.map((f) => f.key) }).toEqual({ key, fields: expected });
    }
  });
});

describe('Item Deleted (item_deleted)', () => {
  const deleted = { ...item({ item_id: 'itm-5', version: 7 }), deleted_at: '2026-03-09T11:45:00.000Z' };

  test('a delivery becomes one run with the last state, deleted_at and id = item_id', async () => {
    expect(await appTester(itemDeleted.perform, { authData, inputData: {}, ...signedDelivery(deleted) })).toEqual([{ id: 'itm-5', ...deleted }]);
  });

  test('samples: recent deletions from the feed; erased bodies (deliveries ended) are no sample', async () => {
    const erased = { item_id: 'itm-4', erased: true };
    api()
      .get('/v1/ext/events')
      .query({ event: 'item.deleted', limit: String(FEED_SAMPLE_WINDOW) })
      .reply(200, feedEvents('item.deleted', [deleted, erased]));
    expect(await appTester(itemDeleted.performList, { authData, inputData: {} })).toEqual([{ id: 'itm-5', ...deleted }]);
  });

  test('samples with only erased deletions retained: the item.deleted sample', async () => {
    api()
      .get('/v1/ext/events')
      .query({ event: 'item.deleted', limit: String(FEED_SAMPLE_WINDOW) })
      .reply(200, feedEvents('item.deleted', [{ item_id: 'itm-4', erased: true }]));
    api().get('/v1/ext/webhooks/sample/items').query({ event: 'item.deleted' }).reply(200, { ...deleted, item_id: 'sample-item' });
    const samples = (await appTester(itemDeleted.performList, { authData, inputData: {} })) as Record<string, unknown>[];
    expect(samples).toEqual([expect.objectContaining({ id: 'sample-item', deleted_at: deleted.deleted_at })]);
  });

  test('the static sample is a valid item.deleted payload plus id; output fields include Deleted At', () => {
    const { id, ...payload } = App.triggers.item_deleted.operation.sample as Record<string, unknown>;
    expect(ItemDeletedEventSchema.parse(payload)).toBeTruthy();
    expect(id).toBe(payload.item_id);
    const fields = (App.triggers.item_deleted.operation.outputFields as unknown[]).filter((f): f is { key: string; label: string } => typeof f === 'object');
    expect(fields.find((f) => f.key === 'deleted_at')).toMatchObject({ label: 'Deleted At' });
  });
});

describe('Updated Task (task_updated)', () => {
  const updated = (overrides: Partial<TaskChangedEvent> = {}): TaskChangedEvent => ({
    ...task({ updated_at: '2026-03-02T10:00:00.000Z', priority: 'high' }),
    changed_fields: ['priority'],
    previous: { priority: 'none' },
    ...overrides,
  });

  test('a delivery becomes one run with id "<task_id>:<updated_at>", previous values kept (Zapier shows Previous Priority)', async () => {
    const runs = await appTester(taskUpdated.perform, { authData, inputData: {}, ...signedDelivery(updated()) });
    expect(runs).toEqual([{ ...updated(), id: 'tsk-1:2026-03-02T10:00:00.000Z' }]);
    const fields = App.triggers.task_updated.operation.outputFields as { key: string; label: string }[];
    expect(fields.find((f) => f.key === 'previous__priority')).toMatchObject({ label: 'Previous Priority' });
  });

  test('the task unlinked from a deleted item triggers with Previous Item ID', async () => {
    const unlinked = updated({ item_id: null, changed_fields: ['item_id'], previous: { item_id: 'itm-5' }, updated_at: '2026-03-09T11:45:00.000Z' });
    const runs = (await appTester(taskUpdated.perform, { authData, inputData: { filter_fields: ['item_id'] }, ...signedDelivery(unlinked) })) as Record<string, unknown>[];
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ item_id: null, previous: { item_id: 'itm-5' } });
  });

  test('samples: the newest task.updated events, through "Only when these fields change"; the static sample is a valid task.updated payload', async () => {
    const rescheduled = updated({ task_id: 'tsk-3', changed_fields: ['due_at'], previous: { due_at: '2026-03-04T15:00:00.000Z' }, updated_at: '2026-03-02T08:00:00.000Z' });
    const reprioritized = updated({ task_id: 'tsk-4', changed_fields: ['priority'], previous: { priority: 'none' }, updated_at: '2026-03-02T09:00:00.000Z' });
    api()
      .get('/v1/ext/events')
      .query({ event: 'task.updated', limit: String(FEED_SAMPLE_WINDOW) })
      .reply(200, feedEvents('task.updated', [reprioritized, rescheduled]));
    const samples = (await appTester(taskUpdated.performList, { authData, inputData: { filter_fields: ['due_at'] } })) as Record<string, unknown>[];
    expect(samples).toEqual([{ ...rescheduled, id: 'tsk-3:2026-03-02T08:00:00.000Z' }]);
    const { id, ...payload } = App.triggers.task_updated.operation.sample as Record<string, unknown>;
    expect(TaskChangedEventSchema.parse(payload)).toBeTruthy();
    expect(id).toBe(`${payload.task_id as string}:${payload.updated_at as string}`);
  });

  test('a Stage input on a task trigger is ignored; a mapped Stage without Pipeline on an item trigger is refused', async () => {
    expect(hookFilterOf('task.updated', { stage_id: 'stg-1' })).toBeUndefined();
    const error = await thrown(appTester(itemDeleted.performSubscribe, { authData, targetUrl: TARGET_URL, inputData: { stage_id: 'stg-1' } }));
    expect(error.code).toBe('InvalidData');
  });
});

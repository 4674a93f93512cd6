/**
 * Find Item and Find Task against a nock'ed server: what each criterion requests (CONTRACT "Lists" filters, the
 * single-resource GETs), empty results for no match (a 404 included), full results with custom fields, and the
 * search-or-create pairing with Create Item and Update Item.
 */
import { createProblem } from '@stageline/shared';
import { perform as findItem } from '../src/searches/find-item';
import { perform as findTask } from '../src/searches/find-task';
import { App, SALES, SERVER, appTester, authData, item, task, thrown } from './helpers/app';
import { api, useNock } from './helpers/nock';

useNock();

describe('Find Item', () => {
  test('by item ID: the item with every field, custom fields included, and id = item_id', async () => {
    const found = item({ item_id: 'itm-9', short_id: 'SALES-9' });
    api().get('/v1/ext/items/itm-9').reply(200, found);
    expect(await appTester(findItem, { authData, inputData: { item_id: 'itm-9' } })).toEqual([{ id: 'itm-9', ...found }]);
  });

  test('by item ID: an unknown (or another company\'s) item is an empty result, not an error', async () => {
    api().get('/v1/ext/items/nope').reply(404, createProblem('not_found', 'Item "nope" was not found.'));
    expect(await appTester(findItem, { authData, inputData: { item_id: 'nope' } })).toEqual([]);
  });

  test('by item ID within another pipeline than the item\'s: no match', async () => {
    api().get('/v1/ext/items/itm-1').reply(200, item());
    expect(await appTester(findItem, { authData, inputData: { item_id: 'itm-1', pipeline_id: 'pl-support' } })).toEqual([]);
  });

  test('by short ID: the short_id filter, optionally within a pipeline', async () => {
    api().get('/v1/ext/items').query({ short_id: 'sales-1', pipeline_id: SALES.id, limit: '25' }).reply(200, [item()]);
    const results = await appTester(findItem, { authData, inputData: { short_id: ' sales-1 ', pipeline_id: SALES.id } });
    expect(results).toEqual([{ id: 'itm-1', ...item() }]);
  });

  test('by name: the name filter, trimmed; no match is an empty result', async () => {
    api().get('/v1/ext/items').query({ name: 'Acme: 50 seats', limit: '25' }).reply(200, [item({ item_id: 'itm-2' }), item()]);
    expect((await appTester(findItem, { authData, inputData: { name: '  Acme: 50 seats ' } })).map((i) => i.id)).toEqual(['itm-2', 'itm-1']);
    api().get('/v1/ext/items').query({ name: 'Nobody', limit: '25' }).reply(200, []);
    expect(await appTester(findItem, { authData, inputData: { name: 'Nobody' } })).toEqual([]);
  });

  test('short ID and name together must both match', async () => {
    api().get('/v1/ext/items').query({ short_id: 'SALES-1', name: 'Acme', limit: '25' }).reply(200, []);
    expect(await appTester(findItem, { authData, inputData: { short_id: 'SALES-1', name: 'Acme' } })).toEqual([]);
  });

  test('without any criterion: a clear input error before any request', async () => {
    const error = await thrown(appTester(findItem, { authData, inputData: { pipeline_id: SALES.id } }));
    expect(error.message).toContain('Give an Item (ID), a Short ID such as SALES-42, or a Name to search by.');
  });

  test('other API errors are reported, e.g. a missing scope', async () => {
    api().get('/v1/ext/items/itm-1').reply(403, createProblem('insufficient_scope', 'This key lacks the items:read scope.'));
    expect((await thrown(appTester(findItem, { authData, inputData: { item_id: 'itm-1' } }))).status).toBe(403);
  });

  test('is "Find or Create Item" with Create Item, and updates what it finds with Update Item', () => {
    expect(App.searches.find_item.display.label).toBe('Find Item');
    expect(App.searchOrCreates!.find_item).toMatchObject({
      search: 'find_item',
      create: 'create_item',
      update: 'update_item',
      updateInputFromSearchOutput: { item_id: 'id' },
    });
  });
});

describe('Find Task', () => {
  test('by task ID: the task with id = task_id; unknown is empty', async () => {
    api().get('/v1/ext/tasks/tsk-1').reply(200, task());
    expect(await appTester(findTask, { authData, inputData: { task_id: 'tsk-1' } })).toEqual([{ id: 'tsk-1', ...task() }]);
    api().get('/v1/ext/tasks/nope').reply(404, createProblem('not_found', 'Task "nope" was not found.'));
    expect(await appTester(findTask, { authData, inputData: { task_id: 'nope' } })).toEqual([]);
  });

  test('by task ID with "Open only": a completed task is no match', async () => {
    api().get('/v1/ext/tasks/tsk-1').reply(200, task({ is_completed: true, completed_at: '2026-03-04T10:00:00.000Z' }));
    expect(await appTester(findTask, { authData, inputData: { task_id: 'tsk-1', completion: 'open' } })).toEqual([]);
  });

  test('by title: the list filters for item, assignee and completion, the title compared exactly (case-insensitive)', async () => {
    api()
      .get('/v1/ext/tasks')
      .query({ item_id: 'itm-1', assigned_to: 'maria', is_completed: 'false', limit: '500' })
      .reply(200, [
        task({ task_id: 'tsk-3', title: 'Call Ada again', item_id: 'itm-1' }),
        task({ task_id: 'tsk-2', title: ' call ada ', item_id: 'itm-1' }),
        task({ item_id: 'itm-1' }),
      ]);
    const results = await appTester(findTask, {
      authData,
      inputData: { title: 'Call Ada', item_id: 'itm-1', assigned_to: 'maria', completion: 'open' },
    });
    expect(results.map((t) => t.id)).toEqual(['tsk-2', 'tsk-1']);
  });

  test('by title: follows Link rel="next" for a bounded number of pages', async () => {
    api()
      .get('/v1/ext/tasks')
      .query({ limit: '500' })
      .reply(200, [task({ task_id: 'tsk-9', title: 'Other' })], { Link: `<${SERVER}/v1/ext/tasks?limit=500&cursor=p2>; rel="next"` });
    api().get('/v1/ext/tasks').query({ limit: '500', cursor: 'p2' }).reply(200, [task({ task_id: 'tsk-4' })]);
    expect((await appTester(findTask, { authData, inputData: { title: 'call ada' } })).map((t) => t.id)).toEqual(['tsk-4']);
  });

  test('by title: no match is an empty result', async () => {
    api().get('/v1/ext/tasks').query({ is_completed: 'true', limit: '500' }).reply(200, [task()]);
    expect(await appTester(findTask, { authData, inputData: { title: 'Call Ada', completion: 'completed' } })).toEqual([]);
  });

  test('needs a task or a title; an unknown completion value is an input error', async () => {
    expect((await thrown(appTester(findTask, { authData, inputData: { assigned_to: 'maria' } }))).message).toContain('Give a Task (ID) or a Title');
    expect((await thrown(appTester(findTask, { authData, inputData: { title: 'x', completion: 'done' } }))).message).toContain('Completion must be one of');
  });

  test('its Item input is the item picker, its Task input the task picker, Assigned To the people picker', async () => {
    const fields = (await appTester(App.searches.find_task.operation.inputFields as never, { authData, inputData: {} })) as { key: string; dynamic?: string }[];
    expect(fields.map((f) => [f.key, f.dynamic])).toEqual([
      ['task_id', 'task_list.id.label'],
      ['title', undefined],
      ['item_id', 'item_list.id.label'],
      ['assigned_to', 'user_list.id.label'],
      ['completion', undefined],
    ]);
  });
});

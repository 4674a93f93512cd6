/**
 * Item and task pickers (hidden triggers item_list and task_list) against a nock'ed server: the dropdowns of every
 * Item and Task input, labels, the chosen pipeline as filter, and paging over the API's cursor the way Zapier pages
 * a dynamic dropdown (bundle.meta.page with z.cursor).
 */
import { listItemChoices } from '../src/triggers/item-list';
import { listTaskChoices } from '../src/triggers/task-list';
import { App, SALES, SERVER, appTester, authData, cursorStore, item, runPage, task } from './helpers/app';
import { api, useNock } from './helpers/nock';

useNock();

type Field = { key: string; label?: string; dynamic?: string; required?: boolean };

describe('item picker (item_list)', () => {
  test('is a hidden, paging trigger', () => {
    const trigger = App.triggers.item_list;
    expect(trigger.display.hidden).toBe(true);
    expect(trigger.operation).toMatchObject({ type: 'polling', canPaginate: true });
  });

  test('page 0 lists the newest items labelled "SHORT-ID name" and keeps the next page\'s URL', async () => {
    const store = cursorStore();
    api()
      .get('/v1/ext/items')
      .query({ limit: '100' })
      .reply(200, [item({ item_id: 'itm-2', short_id: 'SALES-2', name: 'Beta' }), item()], {
        Link: `<${SERVER}/v1/ext/items?limit=100&cursor=c2>; rel="next"`,
      });
    const choices = await runPage(listItemChoices, { authData }, 0, store);
    expect(choices).toEqual([
      { id: 'itm-2', label: 'SALES-2 Beta', short_id: 'SALES-2', name: 'Beta', pipeline: 'Sales', stage: 'Lead' },
      { id: 'itm-1', label: 'SALES-1 Acme: 50 seats', short_id: 'SALES-1', name: 'Acme: 50 seats', pipeline: 'Sales', stage: 'Lead' },
    ]);
    expect(store.stored).toBe(`${SERVER}/v1/ext/items?limit=100&cursor=c2`);

    // page 1 follows the stored URL; it is the last page (no Link), so page 2 is empty without a request
    api().get('/v1/ext/items').query({ limit: '100', cursor: 'c2' }).reply(200, [item({ item_id: 'itm-0', short_id: 'SALES-0', name: 'Old' })]);
    expect((await runPage(listItemChoices, { authData }, 1, store)).map((c) => c.label)).toEqual(['SALES-0 Old']);
    expect(store.stored).toBe('');
    expect(await runPage(listItemChoices, { authData }, 2, store)).toEqual([]);
  });

  test('with a Pipeline chosen in the step, lists only its items; a mapped pipeline does not filter', async () => {
    api().get('/v1/ext/items').query({ limit: '100', pipeline_id: SALES.id }).reply(200, [item()]);
    expect(await runPage(listItemChoices, { authData, inputData: { pipeline_id: SALES.id } }, 0, cursorStore())).toHaveLength(1);
    api().get('/v1/ext/items').query({ limit: '100' }).reply(200, []);
    expect(await runPage(listItemChoices, { authData, inputData: { pipeline_id: '{{123__pipeline_id}}' } }, 0, cursorStore())).toEqual([]);
  });

  test('backs the Item input of Update Item, Create Task and Update Task', async () => {
    const forms: [string, unknown][] = [
      ['update_item', App.creates.update_item.operation.inputFields],
      ['create_task', App.creates.create_task.operation.inputFields],
      ['update_task', App.creates.update_task.operation.inputFields],
    ];
    for (const [key, inputFields] of forms) {
      const fields = (await appTester(inputFields as never, { authData, inputData: {} })) as Field[];
      expect([key, fields.find((f) => f.key === 'item_id')]).toEqual([key, expect.objectContaining({ label: 'Item', dynamic: 'item_list.id.label' })]);
    }
  });
});

describe('task picker (task_list)', () => {
  test('is a hidden, paging trigger', () => {
    expect(App.triggers.task_list.display.hidden).toBe(true);
    expect(App.triggers.task_list.operation).toMatchObject({ type: 'polling', canPaginate: true });
  });

  test('lists tasks labelled with title, due date and assignee, completed ones marked, and pages', async () => {
    const store = cursorStore();
    api()
      .get('/v1/ext/tasks')
      .query({ limit: '100' })
      .reply(200, [task({ task_id: 'tsk-2', title: 'Send proposal', is_completed: true, completed_at: '2026-03-04T10:00:00.000Z' }), task()], {
        Link: `<${SERVER}/v1/ext/tasks?limit=100&cursor=t2>; rel="next"`,
      });
    const choices = await runPage(listTaskChoices, { authData }, 0, store);
    expect(choices.map((c) => [c.id, c.label])).toEqual([
      ['tsk-2', 'Send proposal · due 2026-03-05 · maria (done)'],
      ['tsk-1', 'Call Ada · due 2026-03-05 · maria'],
    ]);
    api().get('/v1/ext/tasks').query({ limit: '100', cursor: 't2' }).reply(200, []);
    expect(await runPage(listTaskChoices, { authData }, 1, store)).toEqual([]);
  });

  test('backs the Task input of Update Task', async () => {
    const fields = (await appTester(App.creates.update_task.operation.inputFields as never, { authData, inputData: {} })) as Field[];
    expect(fields[0]).toMatchObject({ key: 'task_id', label: 'Task', dynamic: 'task_list.id.label', required: true });
  });
});

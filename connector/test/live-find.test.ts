/**
 * Find Item, Find Task and the item and task pickers against a REAL Stageline server (test/helpers/live-server.ts),
 * the way Zapier runs them: the server's list filters (CONTRACT "Lists"), 404s as "not found", full items with
 * custom fields, and a picker paging through more than one page of items over the API's cursor. The server runs
 * with a raised rate limit: the test creates 105 items.
 */
import crypto from 'node:crypto';
import { ItemSchema, TaskSchema } from '@stageline/shared';
import { perform as createItem } from '../src/creates/create-item';
import { perform as createTask } from '../src/creates/create-task';
import { perform as updateTask } from '../src/creates/update-task';
import { perform as findItem } from '../src/searches/find-item';
import { perform as findTask } from '../src/searches/find-task';
import { listItemChoices } from '../src/triggers/item-list';
import { listTaskChoices } from '../src/triggers/task-list';
import { appTester, cursorStore, runPage, demoSalesLead } from './helpers/app';
import { startLiveServer, type LiveServer } from './helpers/live-server';

let server: LiveServer;
let authData: { api_key: string; server_url: string };
let sales: { pipelineId: string; leadId: string };

beforeAll(async () => {
  server = await startLiveServer({ RATE_LIMIT_PER_MINUTE: '1000' });
  authData = { api_key: server.apiKey, server_url: server.url };
  sales = await demoSalesLead(authData);
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

/** Creates a Sales item through the connector's Create Item. */
function newItem(name: string, email = `f.${crypto.randomBytes(5).toString('hex')}@acme.example`) {
  return appTester(createItem, { authData, inputData: { pipeline_id: sales.pipelineId, stage_id: sales.leadId, name, custom__email: email, custom__deal_value: '750' } });
}

describe('Find Item on a real server', () => {
  test('by item ID, short ID (any case) and name (within the pipeline): the full item, custom fields included', async () => {
    const created = await newItem('Findable Deal');
    const byId = await appTester(findItem, { authData, inputData: { item_id: created.item_id } });
    expect(byId).toHaveLength(1);
    expect(ItemSchema.parse(byId[0])).toMatchObject({ item_id: created.item_id, name: 'Findable Deal', deal_value: 750, email: created.email });
    expect(byId[0]!.id).toBe(created.item_id);

    const byShort = await appTester(findItem, { authData, inputData: { short_id: created.short_id.toLowerCase() } });
    expect(byShort.map((i) => i.item_id)).toEqual([created.item_id]);

    const byName = await appTester(findItem, { authData, inputData: { name: ' findable deal ', pipeline_id: sales.pipelineId } });
    expect(byName.map((i) => i.item_id)).toEqual([created.item_id]);
    expect(byName[0]).toMatchObject({ email: created.email, deal_value: 750 });
  });

  test('no match is an empty result: unknown ID, short ID or name, or another pipeline', async () => {
    expect(await appTester(findItem, { authData, inputData: { item_id: crypto.randomUUID() } })).toEqual([]);
    expect(await appTester(findItem, { authData, inputData: { short_id: 'SALES-999999' } })).toEqual([]);
    expect(await appTester(findItem, { authData, inputData: { name: 'No such deal anywhere' } })).toEqual([]);
    const created = await newItem('Pipeline Bound');
    expect(await appTester(findItem, { authData, inputData: { name: 'Pipeline Bound', pipeline_id: crypto.randomUUID() } })).toEqual([]);
    expect(await appTester(findItem, { authData, inputData: { item_id: created.item_id, name: 'Another name' } })).toEqual([]);
  });
});

describe('Find Task on a real server', () => {
  test('by ID, and by title with item, assignee and open/completed filters', async () => {
    const deal = await newItem('Task Holder');
    const due = '2026-03-05T15:00:00Z';
    const wanted = await appTester(createTask, { authData, inputData: { title: 'Send contract', due_at: due, assigned_to: 'maria@acme.example', item_id: deal.item_id } });
    await appTester(createTask, { authData, inputData: { title: 'Send contract', due_at: due, assigned_to: 'omar@acme.example' } });

    const byId = await appTester(findTask, { authData, inputData: { task_id: wanted.task_id } });
    expect(TaskSchema.parse(byId[0])).toMatchObject({ task_id: wanted.task_id, title: 'Send contract' });
    expect(await appTester(findTask, { authData, inputData: { task_id: crypto.randomUUID() } })).toEqual([]);

    const byTitle = await appTester(findTask, { authData, inputData: { title: 'send CONTRACT', item_id: deal.item_id, completion: 'open' } });
    expect(byTitle.map((t) => t.task_id)).toEqual([wanted.task_id]);
    const byAssignee = await appTester(findTask, { authData, inputData: { title: 'Send contract', assigned_to: 'omar@acme.example' } });
    expect(byAssignee.map((t) => t.assigned_to)).toEqual(['omar@acme.example']);

    expect(await appTester(findTask, { authData, inputData: { title: 'Send contract', item_id: deal.item_id, completion: 'completed' } })).toEqual([]);
    await appTester(updateTask, { authData, inputData: { task_id: wanted.task_id, is_completed: 'yes' } });
    const done = await appTester(findTask, { authData, inputData: { title: 'Send contract', item_id: deal.item_id, completion: 'completed' } });
    expect(done.map((t) => [t.task_id, t.is_completed])).toEqual([[wanted.task_id, true]]);
    expect(await appTester(findTask, { authData, inputData: { title: 'Nothing like this' } })).toEqual([]);
  });
});

describe('pickers on a real server', () => {
  test('the item picker pages through every item, labelled "SHORT-ID name"', async () => {
    const created = new Set<string>();
    for (let i = 0; i < 105; i++) {
      const res = await fetch(`${server.url}/v1/ext/items`, {
        method: 'POST',
        headers: { 'x-api-key': server.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `Bulk ${i}`, pipeline_id: sales.pipelineId, stage_id: sales.leadId, metadata: { email: `bulk${i}@acme.example` } }),
      });
      expect(res.status).toBe(201);
      created.add(((await res.json()) as { item_id: string }).item_id);
    }
    const store = cursorStore();
    const seen: { id: string; label: string }[] = [];
    for (let page = 0; page < 10; page++) {
      const choices = await runPage(listItemChoices, { authData, inputData: { pipeline_id: sales.pipelineId } }, page, store);
      if (choices.length === 0) break;
      expect(choices.length).toBeLessThanOrEqual(100);
      seen.push(...choices);
    }
    expect(seen.length).toBeGreaterThan(100);
    expect(new Set(seen.map((c) => c.id)).size).toBe(seen.length); // no item twice
    for (const id of created) expect(seen.some((c) => c.id === id)).toBe(true);
    expect(seen[0]!.label).toMatch(/^SALES-\d+ Bulk 104$/);
  });

  test('the task picker lists tasks labelled with title, due date and assignee', async () => {
    const task = await appTester(createTask, { authData, inputData: { title: 'Pick me', due_at: '2026-04-01T09:00:00Z', assigned_to: 'lee' } });
    const choices = await runPage(listTaskChoices, { authData }, 0, cursorStore());
    expect(choices[0]).toMatchObject({ id: task.task_id, label: 'Pick me · due 2026-04-01 · lee' });
  });
});

/**
 * The connector against a REAL Stageline server (test/helpers/live-server.ts spawns the built server), the way
 * Zapier runs it: every operation through createAppTester with authData { api_key, server_url }.
 * Requests per key stay well under the 60-per-minute limit; the throttling test uses its own server.
 */
import crypto from 'node:crypto';
import { ItemSchema, DuplicateMatchSchema, MeSchema, TaskSchema, WebhookSubscriptionCreatedSchema } from '@stageline/shared';
import { testAuth } from '../src/authentication';
import { perform as createItem } from '../src/creates/create-item';
import { perform as createTask } from '../src/creates/create-task';
import { perform as updateItem } from '../src/creates/update-item';
import { perform as updateTask } from '../src/creates/update-task';
import { perform as findDuplicates } from '../src/searches/find-duplicate-items';
import { perform as onDelivery, performList, performSubscribe, performUnsubscribe } from '../src/triggers/item-created';
import { listPipelines } from '../src/triggers/pipeline-list';
import { listStages } from '../src/triggers/stage-list';
import { listStatuses } from '../src/triggers/status-list';
import { App, appTester, thrown } from './helpers/app';
import { receivedDelivery } from './helpers/deliveries';
import { startHookReceiver, type HookReceiver } from './helpers/hook-receiver';
import { startLiveServer, type LiveServer } from './helpers/live-server';

let server: LiveServer;
let authData: { api_key: string; server_url: string };

/** Ids of the demo Sales pipeline, read once through the dropdown triggers. */
let sales: { pipelineId: string; stages: Record<string, string>; leadStatuses: Record<string, string> } | undefined;

async function salesIds(): Promise<NonNullable<typeof sales>> {
  if (sales) return sales;
  const pipelines = await appTester(listPipelines, { authData });
  const pipeline = pipelines.find((p) => p.name === 'Sales');
  if (!pipeline) throw new Error(`no Sales pipeline in ${JSON.stringify(pipelines)}`);
  const stages = await appTester(listStages, { authData, inputData: { pipeline_id: pipeline.id } });
  const lead = stages.find((s) => s.name === 'Lead')!;
  const statuses = await appTester(listStatuses, { authData, inputData: { pipeline_id: pipeline.id, stage_id: lead.id } });
  sales = {
    pipelineId: pipeline.id,
    stages: Object.fromEntries(stages.map((s) => [s.name, s.id])),
    leadStatuses: Object.fromEntries(statuses.map((s) => [s.name, s.id])),
  };
  return sales;
}

/** A fresh email, so duplicate detection on email only ever matches this test's items. */
function uniqueEmail(): string {
  return `ada.${crypto.randomBytes(6).toString('hex')}@acme.example`;
}

/** Creates a Sales item in Lead through the connector (no custom values: one request). */
async function newLead(name: string) {
  const ids = await salesIds();
  return appTester(createItem, { authData, inputData: { pipeline_id: ids.pipelineId, stage_id: ids.stages.Lead, name } });
}

beforeAll(async () => {
  server = await startLiveServer();
  authData = { api_key: server.apiKey, server_url: server.url };
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

describe('connecting to a real Stageline server', () => {
  test('the connection test returns the demo company and key, and the label names both', async () => {
    const me = MeSchema.parse(await appTester(testAuth, { authData }));
    expect(me.company.name).toBe('Demo Company');
    expect(me.key.name).toBe('Demo key');
    expect(App.authentication!.connectionLabel).toBe('{{bundle.inputData.company.name}} ({{bundle.inputData.key.name}})');
  });

  test('a wrong key is an authentication error', async () => {
    const error = await thrown(appTester(testAuth, { authData: { ...authData, api_key: 'sk_not_a_real_key' } }));
    expect(error).toMatchObject({ code: 'AuthenticationError', status: 401 });
    expect(error.message).toContain('Company Settings → API Keys');
  });

  test('dropdowns list the Sales pipeline, its stages in order and the statuses of a stage', async () => {
    const ids = await salesIds();
    expect(Object.keys(ids.stages)).toEqual(['Lead', 'Qualified', 'Proposal', 'Closed']);
    expect(Object.keys(ids.leadStatuses)).toEqual(['Open', 'Won', 'Lost']);
  });
});

describe('items on a real server', () => {
  test("Create Item's form shows the Sales blueprint's custom fields, then the idempotency key", async () => {
    const ids = await salesIds();
    const fields = (await appTester(App.creates.create_item.operation.inputFields as never, {
      authData,
      inputData: { pipeline_id: ids.pipelineId },
    })) as { key: string; type?: string }[];
    expect(fields.slice(-3)).toEqual([
      expect.objectContaining({ key: 'custom__email', label: 'Email', type: 'string' }),
      expect.objectContaining({ key: 'custom__deal_value', label: 'Deal value', type: 'number' }),
      expect.objectContaining({ key: 'idempotency_key', required: false }),
    ]);
  });

  test('Create Item creates the item with its custom values, source zapier, in the stage first status', async () => {
    const ids = await salesIds();
    const email = uniqueEmail();
    const created = await appTester(createItem, {
      authData,
      inputData: { pipeline_id: ids.pipelineId, stage_id: ids.stages.Lead, name: 'Acme: 50 seats', custom__email: email, custom__deal_value: '12500' },
    });
    expect(ItemSchema.parse(created)).toBeTruthy();
    expect(created).toMatchObject({
      id: created.item_id,
      name: 'Acme: 50 seats',
      pipeline: 'Sales',
      stage: 'Lead',
      status: 'Open',
      source: 'zapier',
      email,
      deal_value: 12500,
      version: 1,
    });
    expect(created.short_id).toMatch(/^SALES-\d+$/);
  });

  test('Find Duplicate Items finds the item with the same email (matched on email); another email finds nothing', async () => {
    const ids = await salesIds();
    const email = uniqueEmail();
    const original = await appTester(createItem, {
      authData,
      inputData: { pipeline_id: ids.pipelineId, stage_id: ids.stages.Lead, name: 'Original', custom__email: email },
    });
    const matches = await appTester(findDuplicates, {
      authData,
      inputData: { pipeline_id: ids.pipelineId, name: 'Someone else', custom__email: email.toUpperCase() },
    });
    expect(matches.map((m) => DuplicateMatchSchema.parse(m).item_id)).toEqual([original.item_id]);
    expect(matches[0]).toMatchObject({ id: original.item_id, matched_on: ['email'] });
    expect(await appTester(findDuplicates, { authData, inputData: { pipeline_id: ids.pipelineId, custom__email: uniqueEmail() } })).toEqual([]);
  });

  test('Update Item moves the item with optimistic locking; a stale Version is refused with the current version', async () => {
    const ids = await salesIds();
    const item = await newLead('To qualify');
    const moved = await appTester(updateItem, {
      authData,
      inputData: { item_id: item.item_id, pipeline_id: ids.pipelineId, stage_id: ids.stages.Qualified, version: String(item.version) },
    });
    expect(moved).toMatchObject({ id: item.item_id, stage: 'Qualified', status: 'Open', version: item.version + 1 });

    const error = await thrown(appTester(updateItem, { authData, inputData: { item_id: item.item_id, name: 'Too late', version: item.version } }));
    expect(error.status).toBe(409);
    expect(error.message).toContain(`The item changed since it was read: Stageline now has version ${item.version + 1}`);
  });

  test('Update Item changes a custom field and leaves everything else as it was', async () => {
    const ids = await salesIds();
    const item = await newLead('Worth more');
    const updated = await appTester(updateItem, {
      authData,
      inputData: { item_id: item.item_id, pipeline_id: ids.pipelineId, custom__deal_value: '999.5' },
    });
    expect(updated).toMatchObject({ name: 'Worth more', stage: 'Lead', deal_value: 999.5, version: item.version + 1 });
  });

  test("a stage that is not the pipeline's is explained from Stageline's 422", async () => {
    const ids = await salesIds();
    const error = await thrown(
      appTester(createItem, { authData, inputData: { pipeline_id: ids.pipelineId, stage_id: 'no-such-stage', name: 'Lost' } }),
    );
    expect(error.status).toBe(422);
    expect(error.message).toContain('Stageline could not use some of the values.');
    expect(error.message).toContain('stage_id');
  });

  test('a value the blueprint refuses (a malformed email) is reported before anything is created', async () => {
    const ids = await salesIds();
    const error = await thrown(
      appTester(createItem, {
        authData,
        inputData: { pipeline_id: ids.pipelineId, stage_id: ids.stages.Lead, name: 'Bad email', custom__email: 'not-an-email' },
      }),
    );
    expect(error).toMatchObject({ code: 'InvalidData', status: 400 });
    expect(error.message).toContain('metadata.email must be an email address');
  });
});

describe('tasks on a real server', () => {
  test('Create Task coerces Zapier strings and links the item; Update Task completes it', async () => {
    const item = await newLead('Needs a call');
    const created = await appTester(createTask, {
      authData,
      inputData: {
        title: 'Call Ada',
        due_at: '2026-03-05T15:00:00+01:00',
        assigned_to: 'maria@acme.example',
        priority: 'High',
        task_type: 'Follow up',
        item_id: item.item_id,
        duration_minutes: '30',
        reminder_minutes: '15',
        is_completed: 'no',
        notes: '',
      },
    });
    expect(TaskSchema.parse(created)).toBeTruthy();
    expect(created).toMatchObject({
      id: created.task_id,
      title: 'Call Ada',
      priority: 'high',
      task_type: 'follow_up',
      item_id: item.item_id,
      duration_minutes: 30,
      reminder_minutes: 15,
      is_completed: false,
      completed_at: null,
    });
    expect(Date.parse(created.due_at)).toBe(Date.parse('2026-03-05T14:00:00Z'));

    const done = await appTester(updateTask, { authData, inputData: { task_id: created.task_id, is_completed: 'yes', title: '' } });
    expect(done).toMatchObject({ task_id: created.task_id, title: 'Call Ada', is_completed: true });
    expect(done.completed_at).not.toBeNull();
  });
});

describe('the New Item trigger on a real server', () => {
  let receiver: HookReceiver;
  beforeAll(async () => {
    receiver = await startHookReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
  });

  test('subscribe, receive item.created for a new item, run the Zap with it, unsubscribe (twice is fine)', async () => {
    const targetUrl = receiver.urlFor('zap-1');
    const subscription = await appTester(performSubscribe, { authData, targetUrl });
    expect(WebhookSubscriptionCreatedSchema.parse(subscription)).toMatchObject({ target_url: targetUrl, event: 'item.created' });

    const item = await newLead('Hooked');
    const delivery = await receiver.waitFor('zap-1', (d) => (d.body as { item_id?: string }).item_id === item.item_id);
    expect(delivery.headers['x-webhook-event']).toBe('item.created');

    const runs = await appTester(onDelivery, { authData, inputData: {}, ...receivedDelivery(delivery, subscription) });
    expect(runs).toEqual([expect.objectContaining({ id: item.item_id, item_id: item.item_id, name: 'Hooked', stage: 'Lead' })]);

    const bundle = { authData, subscribeData: { id: subscription.id } };
    expect(await appTester(performUnsubscribe, bundle)).toEqual({ id: subscription.id, removed: true });
    expect(await appTester(performUnsubscribe, bundle)).toEqual({ id: subscription.id, removed: false });
  });

  test('samples are the newest item.created events of the feed: real items, with ids', async () => {
    const item = await newLead('Newest');
    const samples = await appTester(performList, { authData, inputData: {} });
    expect(samples.length).toBeGreaterThan(0);
    expect(samples.length).toBeLessThanOrEqual(3);
    expect(samples[0]).toMatchObject({ id: item.item_id, item_id: item.item_id, name: 'Newest', version: 1 });
  });

  test("output fields include the Sales blueprint's custom fields", async () => {
    const fields = (await appTester(App.triggers.item_created.operation.outputFields as never, { authData, inputData: {} })) as { key: string; type?: string }[];
    expect(fields).toEqual(expect.arrayContaining([expect.objectContaining({ key: 'email' }), expect.objectContaining({ key: 'deal_value', type: 'number' })]));
  });
});

describe('a company without items, on a server limited to 3 requests per minute', () => {
  let fresh: LiveServer;
  let freshAuth: { api_key: string; server_url: string };
  beforeAll(async () => {
    fresh = await startLiveServer({ RATE_LIMIT_PER_MINUTE: '3' });
    freshAuth = { api_key: fresh.apiKey, server_url: fresh.url };
  }, 120_000);
  afterAll(async () => {
    await fresh?.stop();
  });

  test("New Item's samples fall back to the sample payload built from the blueprint", async () => {
    const samples = await appTester(performList, { authData: freshAuth, inputData: {} });
    expect(samples).toHaveLength(1);
    expect(ItemSchema.parse(samples[0])).toBeTruthy();
    expect(samples[0]).toMatchObject({ id: samples[0]!.item_id, pipeline: 'Sales' });
    expect(samples[0]).toHaveProperty('email');
    expect(samples[0]).toHaveProperty('deal_value');
  });

  test('over the limit, Zapier gets ThrottledError with the Retry-After delay', async () => {
    let error: Awaited<ReturnType<typeof thrown>> | undefined;
    for (let attempt = 0; attempt < 5 && error === undefined; attempt += 1) {
      try {
        await appTester(testAuth, { authData: freshAuth });
      } catch (err) {
        error = await thrown(Promise.reject(err));
      }
    }
    expect(error?.name).toBe('ThrottledError');
    expect(error?.delay).toBeGreaterThan(0);
    expect(error?.delay).toBeLessThanOrEqual(60);
  });
});

/**
 * Idempotency-Key of the creates against a REAL Stageline server (test/helpers/live-server.ts; PGlite, or PostgreSQL
 * with TEST_DATABASE_URL): running the same create step twice with the same input (what Zapier's retry does) makes
 * ONE item or task, the second answer being the server's replay (`Idempotent-Replayed: true`) with the same id;
 * different input, or a different override, makes two. A retried REST-hook subscribe makes one subscription, and
 * subscribing the same URL again after unsubscribing (within the key's 24 hours) makes a new, live one.
 */
import crypto from 'node:crypto';
import type { Bundle, HttpRequestOptions, ZObject } from 'zapier-platform-core';
import { ItemSchema, TaskSchema, WebhookSubscriptionCreatedSchema, type Item, type Task, type WebhookSubscription } from '@stageline/shared';
import { perform as createItem } from '../src/creates/create-item';
import { perform as createTask } from '../src/creates/create-task';
import { performSubscribe, performUnsubscribe } from '../src/triggers/item-created';
import { appTester, demoSalesLead } from './helpers/app';
import { startLiveServer, type LiveServer } from './helpers/live-server';

let server: LiveServer;
let authData: { api_key: string; server_url: string };
let sales: { pipelineId: string; leadId: string };

/** What one run of a create step gave the Zap, and the `Idempotent-Replayed` header of its POST. */
interface Run<T> {
  output: T;
  replayed: string | undefined;
}

/**
 * Runs a create's perform through the app tester (real middleware, real server) like one Zap step run, with
 * `z.request` wrapped to read the `Idempotent-Replayed` header of the create's POST.
 */
async function run<T>(
  perform: (z: ZObject, bundle: Bundle) => Promise<T>,
  inputData: Record<string, unknown>,
  meta: Record<string, unknown> = { zap: { id: 'zap-live-1' } },
): Promise<Run<T>> {
  let replayed: string | undefined;
  const output = await appTester(
    (z: ZObject, bundle: Bundle) =>
      perform(
        {
          ...z,
          request: async (options: HttpRequestOptions & { url: string }) => {
            const response = await z.request(options);
            if (options.method === 'POST') replayed = response.getHeader('idempotent-replayed') ?? undefined;
            return response;
          },
        } as ZObject,
        bundle,
      ),
    { authData, inputData, meta } as never,
  );
  return { output: output as T, replayed };
}

/** GET /v1/ext/items?name=... straight from the server: how many items bear `name`. */
async function itemsNamed(name: string): Promise<Item[]> {
  const response = await fetch(`${server.url}/v1/ext/items?pipeline_id=${sales.pipelineId}&name=${encodeURIComponent(name)}`, {
    headers: { 'x-api-key': server.apiKey },
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Item[];
}

/** GET /v1/ext/tasks straight from the server: the tasks titled `title`. */
async function tasksTitled(title: string): Promise<Task[]> {
  const response = await fetch(`${server.url}/v1/ext/tasks?limit=100`, { headers: { 'x-api-key': server.apiKey } });
  expect(response.status).toBe(200);
  return ((await response.json()) as Task[]).filter((t) => t.title === title);
}

/** A name no other test uses. */
function unique(prefix: string): string {
  return `${prefix} ${crypto.randomBytes(4).toString('hex')}`;
}

beforeAll(async () => {
  server = await startLiveServer();
  authData = { api_key: server.apiKey, server_url: server.url };
  sales = await demoSalesLead(authData);
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

describe('Idempotency-Key of the creates on a real server', () => {
  test('the same Create Item step run twice with the same input makes ONE item; the second answer is a replay', async () => {
    const name = unique('Retried deal');
    const input = { pipeline_id: sales.pipelineId, stage_id: sales.leadId, name, custom__email: `${crypto.randomUUID()}@acme.example`, custom__deal_value: '900' };
    const first = await run(createItem, input);
    const second = await run(createItem, { ...input });
    expect(first.replayed).toBeUndefined();
    expect(second.replayed).toBe('true');
    expect(ItemSchema.parse(second.output)).toEqual(ItemSchema.parse(first.output));
    expect(second.output).toEqual(first.output);
    expect((await itemsNamed(name)).map((i) => i.item_id)).toEqual([first.output.item_id]);
  });

  test('different input makes two items', async () => {
    const name = unique('Distinct deal');
    const first = await run(createItem, { pipeline_id: sales.pipelineId, stage_id: sales.leadId, name });
    const second = await run(createItem, { pipeline_id: sales.pipelineId, stage_id: sales.leadId, name, contact_id: 'crm-2' });
    expect(second.replayed).toBeUndefined();
    expect(second.output.item_id).not.toBe(first.output.item_id);
    expect((await itemsNamed(name)).map((i) => i.item_id).sort()).toEqual([first.output.item_id, second.output.item_id].sort());
  });

  test('the override makes two runs with identical values distinct, and a retry of each stays one', async () => {
    const name = unique('Per-trigger deal');
    const input = { pipeline_id: sales.pipelineId, stage_id: sales.leadId, name };
    const run101 = await run(createItem, { ...input, idempotency_key: 'trigger-101' });
    const run102 = await run(createItem, { ...input, idempotency_key: 'trigger-102' });
    const retry101 = await run(createItem, { ...input, idempotency_key: 'trigger-101' });
    expect(run102.output.item_id).not.toBe(run101.output.item_id);
    expect(retry101).toMatchObject({ replayed: 'true', output: { item_id: run101.output.item_id } });
    expect(await itemsNamed(name)).toHaveLength(2);
  });

  test('another Zap with the same input makes its own item', async () => {
    const name = unique('Two zaps');
    const input = { pipeline_id: sales.pipelineId, stage_id: sales.leadId, name };
    const zap1 = await run(createItem, input, { zap: { id: '1' } });
    const zap2 = await run(createItem, input, { zap: { id: '2' } });
    expect(zap2.replayed).toBeUndefined();
    expect(zap2.output.item_id).not.toBe(zap1.output.item_id);
  });

  test('the same Create Task step run twice makes ONE task; a different title makes another', async () => {
    const title = unique('Retried call');
    const input = { title, due_at: '2026-05-01T09:00:00Z', assigned_to: 'maria' };
    const first = await run(createTask, input);
    const second = await run(createTask, { ...input });
    expect(second.replayed).toBe('true');
    expect(TaskSchema.parse(second.output)).toEqual(TaskSchema.parse(first.output));
    expect((await tasksTitled(title)).map((t) => t.task_id)).toEqual([first.output.task_id]);
    const other = await run(createTask, { ...input, title: `${title} (2)` });
    expect(other.replayed).toBeUndefined();
    expect(other.output.task_id).not.toBe(first.output.task_id);
  });
});

describe('Idempotency-Key of REST-hook subscribes on a real server', () => {
  /** The company's REST-hook subscriptions to `targetUrl` (GET /v1/ext/webhooks). */
  async function subscriptionsTo(targetUrl: string): Promise<WebhookSubscription[]> {
    const response = await fetch(`${server.url}/v1/ext/webhooks?limit=100`, { headers: { 'x-api-key': server.apiKey } });
    expect(response.status).toBe(200);
    return ((await response.json()) as WebhookSubscription[]).filter((s) => s.target_url === targetUrl);
  }

  test('a retried subscribe makes one subscription; turning the Zap off and on makes a new live one', async () => {
    const targetUrl = `http://127.0.0.1:9/hooks/${crypto.randomUUID()}`;
    const bundle = { authData, targetUrl, meta: { zap: { id: 'zap-hooks-1' } } } as never;
    const first = WebhookSubscriptionCreatedSchema.parse(await appTester(performSubscribe, bundle));
    const retried = WebhookSubscriptionCreatedSchema.parse(await appTester(performSubscribe, bundle));
    expect(retried).toEqual(first);
    expect((await subscriptionsTo(targetUrl)).map((s) => s.id)).toEqual([first.id]);

    expect(await appTester(performUnsubscribe, { authData, subscribeData: { id: first.id } })).toEqual({ id: first.id, removed: true });
    const again = WebhookSubscriptionCreatedSchema.parse(await appTester(performSubscribe, bundle));
    expect(again.id).not.toBe(first.id);
    expect((await subscriptionsTo(targetUrl)).map((s) => s.id)).toEqual([again.id]);
    // a retry of that enable converges on the same new subscription
    expect(WebhookSubscriptionCreatedSchema.parse(await appTester(performSubscribe, bundle)).id).toBe(again.id);
    expect(await subscriptionsTo(targetUrl)).toHaveLength(1);
    await appTester(performUnsubscribe, { authData, subscribeData: { id: again.id } });
  });
});

/**
 * Idempotency-Key on creates (issue 12; CONTRACT "Idempotency"), against the fake server of nock: which key each
 * create sends (same input -> same key, different input or override or Zap -> different key), that a replayed
 * response gives the Zap the same output, and how the idempotency errors reach Zapier.
 */
import { createProblem, isIdempotencyKey, type Item, type Task, type WebhookSubscriptionCreated } from '@stageline/shared';
import type nock from 'nock';
import { perform as createItem } from '../src/creates/create-item';
import { perform as createTask } from '../src/creates/create-task';
import { canonicalJson, deriveIdempotencyKey, nextIdempotencyKey } from '../src/idempotency';
import { performSubscribe } from '../src/triggers/item-created';
import { retryAfterSeconds } from '../src/middleware';
import { SALES, appTester, authData, item, task, thrown } from './helpers/app';
import { api, useNock } from './helpers/nock';

useNock();

const PROBLEM_HEADERS = { 'content-type': 'application/problem+json' };
const ITEM_INPUT = { pipeline_id: SALES.id, stage_id: 'stg-lead', name: 'Acme: 50 seats' };
const TASK_INPUT = { title: 'Call Ada', due_at: '2026-03-05T15:00:00.000Z', assigned_to: 'maria' };

type Meta = Record<string, unknown>;

/** Mocks one POST to `path` answering `status`/`body` (plus `headers`); resolves the Idempotency-Key it received. */
function expectPost(path: string, status: number, body: unknown, headers: Record<string, string> = {}): Promise<string | undefined> {
  return new Promise((resolve) => {
    (api().post(path) as nock.Interceptor).reply(function reply() {
      const value = this.req.headers['idempotency-key'];
      resolve(Array.isArray(value) ? value[0] : value);
      return [status, body, headers];
    });
  });
}

/** Runs Create Item with `inputData` (and `meta`) against a mocked 201; returns the key sent and the output. */
async function itemRun(inputData: Record<string, unknown>, meta: Meta = {}): Promise<{ key: string | undefined; output: unknown }> {
  const sent = expectPost('/v1/ext/items', 201, item());
  const output = await appTester(createItem, { authData, inputData, meta } as never);
  return { key: await sent, output };
}

/** Runs Create Task with `inputData` (and `meta`) against a mocked 201; returns the key sent. */
async function taskKey(inputData: Record<string, unknown>, meta: Meta = {}): Promise<string | undefined> {
  const sent = expectPost('/v1/ext/tasks', 201, task());
  await appTester(createTask, { authData, inputData, meta } as never);
  return sent;
}

describe('the Idempotency-Key of Create Item and Create Task', () => {
  test('is sent on every create: zap- and 64 hex digits, a valid key of the contract', async () => {
    const itemKey = (await itemRun(ITEM_INPUT)).key;
    const tKey = await taskKey(TASK_INPUT);
    for (const key of [itemKey, tKey]) {
      expect(key).toMatch(/^zap-[0-9a-f]{64}$/);
      expect(isIdempotencyKey(key)).toBe(true);
    }
    expect(itemKey).not.toBe(tKey);
  });

  test('the same input in the same Zap gives the same key on a second invocation (a retry)', async () => {
    const meta = { zap: { id: '4711' } };
    expect((await itemRun(ITEM_INPUT, meta)).key).toBe((await itemRun({ ...ITEM_INPUT }, meta)).key);
    expect(await taskKey(TASK_INPUT, meta)).toBe(await taskKey({ ...TASK_INPUT }, meta));
    // also without a Zap id (zapier-platform invoke, the app tester)
    expect((await itemRun(ITEM_INPUT)).key).toBe((await itemRun(ITEM_INPUT)).key);
  });

  test('different input gives a different key', async () => {
    const base = (await itemRun(ITEM_INPUT)).key;
    expect((await itemRun({ ...ITEM_INPUT, name: 'Acme: 51 seats' })).key).not.toBe(base);
    expect((await itemRun({ ...ITEM_INPUT, contact_id: 'crm-1' })).key).not.toBe(base);
    expect(await taskKey({ ...TASK_INPUT, title: 'Call Bob' })).not.toBe(await taskKey(TASK_INPUT));
  });

  test('another Zap, or a test in the Zap editor, gives a different key for the same input', async () => {
    const inZap1 = (await itemRun(ITEM_INPUT, { zap: { id: '1' } })).key;
    const inZap2 = (await itemRun(ITEM_INPUT, { zap: { id: '2' } })).key;
    const sample = (await itemRun(ITEM_INPUT, { zap: { id: '1' }, isLoadingSample: true })).key;
    expect(new Set([inZap1, inZap2, sample, (await itemRun(ITEM_INPUT)).key]).size).toBe(4);
  });

  test('the override field makes runs distinct, is stable itself, and is not sent in the body', async () => {
    const plain = (await itemRun(ITEM_INPUT)).key;
    const run1 = (await itemRun({ ...ITEM_INPUT, idempotency_key: 'trigger-101' })).key;
    const run1Again = (await itemRun({ ...ITEM_INPUT, idempotency_key: ' trigger-101 ' })).key;
    const run2 = (await itemRun({ ...ITEM_INPUT, idempotency_key: 'trigger-102' })).key;
    expect(run1).toBe(run1Again);
    expect(new Set([plain, run1, run2]).size).toBe(3);
    expect(run1).toBe(
      deriveIdempotencyKey({ action: 'create_item', body: { ...ITEM_INPUT, source: 'zapier' }, override: 'trigger-101' }),
    );

    let sentBody: unknown;
    api()
      .post('/v1/ext/tasks', (body: unknown) => ((sentBody = body), true))
      .reply(201, task());
    await appTester(createTask, { authData, inputData: { ...TASK_INPUT, idempotency_key: 'trigger-101' } });
    expect(sentBody).toEqual(TASK_INPUT);
    expect(await taskKey({ ...TASK_INPUT, idempotency_key: 'trigger-101' })).not.toBe(await taskKey(TASK_INPUT));
  });

  test('canonical JSON ignores the order of object keys, so equal bodies hash alike', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null }, u: undefined })).toBe('{"a":{"c":null,"d":[1,{"x":1,"y":2}]},"b":1}');
    expect(deriveIdempotencyKey({ action: 'a', body: { x: 1, y: 2 } })).toBe(deriveIdempotencyKey({ action: 'a', body: { y: 2, x: 1 } }));
  });
});

describe('answers to an idempotent create', () => {
  test('a replayed 201 (Idempotent-Replayed: true) gives the Zap exactly the output of the original', async () => {
    const created: Item = item({ item_id: 'itm-42' });
    const first = expectPost('/v1/ext/items', 201, created);
    const original = await appTester(createItem, { authData, inputData: ITEM_INPUT });
    const again = expectPost('/v1/ext/items', 201, created, { 'Idempotent-Replayed': 'true' });
    const replayed = await appTester(createItem, { authData, inputData: ITEM_INPUT });
    expect(await again).toBe(await first);
    expect(replayed).toEqual(original);
    expect(replayed).toMatchObject({ id: 'itm-42', item_id: 'itm-42' });
  });

  test('a replayed 201 of Create Task too', async () => {
    const created: Task = task({ task_id: 'tsk-42' });
    void expectPost('/v1/ext/tasks', 201, created, { 'Idempotent-Replayed': 'true' });
    expect(await appTester(createTask, { authData, inputData: TASK_INPUT })).toEqual({ id: 'tsk-42', ...created });
  });

  test('409 idempotency_key_in_use becomes a ThrottledError with the Retry-After delay, which Zapier retries', async () => {
    void expectPost('/v1/ext/items', 409, createProblem('idempotency_key_in_use', 'A request with this key is still running.'), {
      ...PROBLEM_HEADERS,
      'Retry-After': '7',
    });
    const error = await thrown(appTester(createItem, { authData, inputData: ITEM_INPUT }));
    expect(error.name).toBe('ThrottledError');
    expect(error.delay).toBe(7);
    expect(error.message).toContain('still working on an earlier attempt');
  });

  test('422 idempotency_key_reused is a clear error about the key, not about the values', async () => {
    void expectPost('/v1/ext/tasks', 422, createProblem('idempotency_key_reused', 'This key was used with a different request.'), PROBLEM_HEADERS);
    const error = await thrown(appTester(createTask, { authData, inputData: { ...TASK_INPUT, idempotency_key: 'fixed' } }));
    expect(error).toMatchObject({ name: 'AppError', code: 'idempotency_key_reused', status: 422 });
    expect(error.message).toContain('already used for a different request within the last 24 hours');
    expect(error.message).toContain('Idempotency Key (Advanced)');
    expect(error.message).not.toContain('Check the pipeline');
  });

  test('a replayed error says it is the stored answer of an earlier attempt', async () => {
    const problem = createProblem('invalid_reference', 'Unknown stage.', { errors: [{ path: 'stage_id', message: 'stage_id: no such stage' }] });
    void expectPost('/v1/ext/items', 422, problem, { ...PROBLEM_HEADERS, 'Idempotent-Replayed': 'true' });
    const error = await thrown(appTester(createItem, { authData, inputData: ITEM_INPUT }));
    expect(error).toMatchObject({ code: 'invalid_reference', status: 422 });
    expect(error.message).toContain('stage_id: no such stage');
    expect(error.message).toContain('stored answer to an earlier attempt of this step with the same values (kept 24 hours)');
  });

  test('Retry-After: delay-seconds or an HTTP-date (RFC 9110), null otherwise', () => {
    const now = Date.parse('2026-03-01T10:00:00Z');
    expect(retryAfterSeconds('2', now)).toBe(2);
    expect(retryAfterSeconds('Sun, 01 Mar 2026 10:00:05 GMT', now)).toBe(5);
    expect(retryAfterSeconds('Sun, 01 Mar 2026 09:00:00 GMT', now)).toBe(0);
    expect(retryAfterSeconds(undefined, now)).toBeNull();
    expect(retryAfterSeconds('soon', now)).toBeNull();
  });
});

describe('the Idempotency-Key of REST-hook subscribes', () => {
  const TARGET_URL = 'https://hooks.zapier.com/hooks/standard/1/abc';
  const BODY = { target_url: TARGET_URL, event: 'item.created' };
  const subscription = (id: string): WebhookSubscriptionCreated =>
    ({ id, target_url: TARGET_URL, event: 'item.created', created_at: '2026-03-01T09:00:00.000Z', secret: `whsec_${'A'.repeat(32)}` }) as WebhookSubscriptionCreated;
  const subscribe = (meta: Meta = { zap: { id: '9' } }) => appTester(performSubscribe, { authData, targetUrl: TARGET_URL, meta } as never);
  const expected = deriveIdempotencyKey({ action: 'subscribe:item.created', body: BODY, zapId: '9' });

  test('a retried subscribe sends the same key: Zap, event and target URL', async () => {
    const first = expectPost('/v1/ext/webhooks', 201, subscription('wh-1'));
    await subscribe();
    const again = expectPost('/v1/ext/webhooks', 201, subscription('wh-1'));
    await subscribe();
    expect(await first).toBe(expected);
    expect(await again).toBe(expected);
  });

  test('a replayed subscription that still exists is returned as it is', async () => {
    void expectPost('/v1/ext/webhooks', 201, subscription('wh-1'), { 'Idempotent-Replayed': 'true' });
    api().get('/v1/ext/webhooks/wh-1/deliveries').query({ limit: '1' }).reply(200, []);
    expect(await subscribe()).toEqual(subscription('wh-1'));
  });

  test('a replayed subscription deleted since (Zap turned off and on) is replaced, under the next key of the chain', async () => {
    const first = expectPost('/v1/ext/webhooks', 201, subscription('wh-1'), { 'Idempotent-Replayed': 'true' });
    api().get('/v1/ext/webhooks/wh-1/deliveries').query({ limit: '1' }).reply(404, createProblem('not_found', 'No such subscription.'), PROBLEM_HEADERS);
    const second = expectPost('/v1/ext/webhooks', 201, subscription('wh-2'));
    expect(await subscribe()).toEqual(subscription('wh-2'));
    expect(await first).toBe(expected);
    expect(await second).toBe(nextIdempotencyKey(expected, 'wh-1'));
  });

  test('a replayed error (e.g. the limit was reached then) is not the answer: the next key of the chain is tried', async () => {
    const limit = createProblem('invalid_reference', 'This company already has 1,000 webhook subscriptions that are not disabled.');
    const first = expectPost('/v1/ext/webhooks', 422, limit, { ...PROBLEM_HEADERS, 'Idempotent-Replayed': 'true' });
    const second = expectPost('/v1/ext/webhooks', 201, subscription('wh-3'));
    expect(await subscribe()).toEqual(subscription('wh-3'));
    expect(await first).toBe(expected);
    expect(await second).toBe(nextIdempotencyKey(expected, 'status-422'));
  });

  test('a fresh error is thrown as the problem it is', async () => {
    const limit = createProblem('invalid_reference', 'This company already has 1,000 webhook subscriptions that are not disabled.');
    void expectPost('/v1/ext/webhooks', 422, limit, PROBLEM_HEADERS);
    const error = await thrown(subscribe());
    expect(error).toMatchObject({ code: 'invalid_reference', status: 422 });
    expect(error.message).toContain('1,000 webhook subscriptions');
    expect(error.message).not.toContain('stored answer');
  });
});

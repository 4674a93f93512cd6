import { App, SALES, SALES_FIELDS, SERVER, SUPPORT, SUPPORT_FIELDS, appTester, authData, feedEvents, item, thrown } from './helpers/app';
import { newSecret, signedDelivery } from './helpers/deliveries';
import { api, useNock } from './helpers/nock';
import { ITEM_OUTPUT_FIELDS } from '../src/fields/item-fields';
import { perform, performList, performSubscribe, performUnsubscribe } from '../src/triggers/item-created';
import { listPipelines } from '../src/triggers/pipeline-list';
import { listStages } from '../src/triggers/stage-list';
import { FEED_SAMPLE_WINDOW } from '../src/triggers/rest-hook';
import { listStatuses } from '../src/triggers/status-list';
import { createProblem } from '@stageline/shared';

useNock();

const trigger = App.triggers.item_created;
const op = trigger.operation;
const TARGET_URL = 'https://hooks.zapier.com/hooks/standard/123/abc/';
const SUBSCRIPTION = {
  id: 'wh-1',
  target_url: TARGET_URL,
  event: 'item.created',
  created_at: '2026-03-01T09:00:00.000Z',
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
};

describe('New Item (REST hook)', () => {
  test('is an instant trigger on items, labelled the Zapier way', () => {
    expect(trigger.key).toBe('item_created');
    expect(trigger.noun).toBe('Item');
    expect(trigger.display).toMatchObject({ label: 'New Item', description: expect.stringMatching(/^Triggers when/) });
    expect(op.type).toBe('hook');
  });

  test('turning the Zap on subscribes the Zap URL to item.created and keeps the subscription', async () => {
    api().post('/v1/ext/webhooks', { target_url: TARGET_URL, event: 'item.created' }).reply(201, SUBSCRIPTION);
    const subscribeData = await appTester(performSubscribe, { authData, targetUrl: TARGET_URL });
    expect(subscribeData).toEqual(SUBSCRIPTION);
  });

  test('turning the Zap off deletes that subscription', async () => {
    api().delete('/v1/ext/webhooks/wh-1').reply(204);
    const result = await appTester(performUnsubscribe, { authData, subscribeData: { id: 'wh-1' } });
    expect(result).toEqual({ id: 'wh-1', removed: true });
  });

  test('turning the Zap off succeeds when Stageline already removed the subscription (404)', async () => {
    api().delete('/v1/ext/webhooks/wh-1').reply(404, createProblem('not_found', 'Webhook "wh-1" was not found.'));
    const result = await appTester(performUnsubscribe, { authData, subscribeData: { id: 'wh-1' } });
    expect(result).toEqual({ id: 'wh-1', removed: false });
  });

  test('turning the Zap off with a revoked key still reports the key problem', async () => {
    api().delete('/v1/ext/webhooks/wh-1').reply(401, createProblem('invalid_api_key', 'The API key has been revoked.'));
    const error = await thrown(appTester(performUnsubscribe, { authData, subscribeData: { id: 'wh-1' } }));
    expect(error.code).toBe('AuthenticationError');
  });

  test('a delivery becomes one Zap run: the item with id = item_id for de-duplication', async () => {
    const delivered = item({ item_id: 'itm-77', short_id: 'SALES-77' });
    const results = await appTester(perform, { authData, inputData: {}, ...signedDelivery(delivered) });
    expect(results).toEqual([{ id: 'itm-77', ...delivered }]);
  });

  test('with a Pipeline chosen, items of other pipelines do not trigger', async () => {
    const bundle = { authData, inputData: { pipeline_id: SUPPORT.id }, ...signedDelivery(item()) };
    expect(await appTester(perform, bundle)).toEqual([]);
    const own = item({ pipeline_id: SUPPORT.id, pipeline: 'Support' });
    expect(await appTester(perform, { ...bundle, ...signedDelivery(own) })).toEqual([{ id: own.item_id, ...own }]);
  });

  test('a delivery signed with another secret is rejected: no Zap run', async () => {
    const forged = signedDelivery(item(), { signingSecret: newSecret() });
    const error = await thrown(appTester(perform, { authData, inputData: {}, ...forged }));
    expect(error.name).toBe('HaltedError');
    expect(error.message).toMatch(/does not carry a valid Stageline signature \(No matching signature found\)/);
  });

  test('an altered body, a missing signature or a stale timestamp is rejected', async () => {
    const genuine = signedDelivery(item({ name: 'Real' }));
    const altered = { ...genuine, rawRequest: { ...genuine.rawRequest, content: genuine.rawRequest.content.replace('Real', 'Fake') } };
    expect((await thrown(appTester(perform, { authData, inputData: {}, ...altered }))).name).toBe('HaltedError');

    const { 'Http-Webhook-Signature': _dropped, ...unsigned } = genuine.rawRequest.headers;
    const error = await thrown(appTester(perform, { authData, inputData: {}, ...genuine, rawRequest: { ...genuine.rawRequest, headers: unsigned } }));
    expect(error).toMatchObject({ name: 'HaltedError', message: expect.stringContaining('Missing required headers') });

    const replayed = signedDelivery(item(), { at: new Date(Date.now() - 10 * 60_000) });
    const stale = await thrown(appTester(perform, { authData, inputData: {}, ...replayed }));
    expect(stale).toMatchObject({ name: 'HaltedError', message: expect.stringContaining('timestamp too old') });
  });

  test('a delivery is verified with the secret kept at subscribe, whatever the case of the header names', async () => {
    const genuine = signedDelivery(item({ item_id: 'itm-9' }));
    const lower = Object.fromEntries(Object.entries(genuine.rawRequest.headers).map(([k, v]) => [k.replace(/^Http-/, '').toLowerCase(), v]));
    const results = await appTester(perform, { authData, inputData: {}, ...genuine, rawRequest: { ...genuine.rawRequest, headers: lower } });
    expect(results).toEqual([{ id: 'itm-9', ...item({ item_id: 'itm-9' }) }]);
    // A Zap whose subscribeData has no secret cannot verify anything.
    const noSecret = await thrown(appTester(perform, { authData, inputData: {}, ...genuine, subscribeData: { id: 'wh-1' } }));
    expect(noSecret).toMatchObject({ name: 'HaltedError', message: expect.stringContaining('Turn the Zap off and on again') });
  });

  test('without a delivery (zapier-platform invoke) perform returns nothing', async () => {
    expect(await appTester(perform, { authData, inputData: {} })).toEqual([]);
  });

  test('a request that is not an item is ignored', async () => {
    expect(await appTester(perform, { authData, inputData: {}, ...signedDelivery({ hello: 'world' }) })).toEqual([]);
  });

  test('loading samples returns the newest item.created events of the feed, exactly as a delivery maps them', async () => {
    const items = [item({ item_id: 'itm-3' }), item({ item_id: 'itm-2' })];
    api().get('/v1/ext/events').query({ event: 'item.created', limit: String(FEED_SAMPLE_WINDOW) }).reply(200, feedEvents('item.created', items));
    const results = (await appTester(performList, { authData, inputData: {} })) as { id: string }[];
    expect(results).toEqual([{ id: 'itm-3', ...items[0] }, { id: 'itm-2', ...items[1] }]);
    const delivered = await appTester(perform, { authData, inputData: {}, ...signedDelivery(items[0]) });
    expect(delivered).toEqual([results[0]]); // the same output, the same id Zapier de-duplicates on
  });

  test('loading samples asks the feed for the chosen pipeline, and at most three are shown', async () => {
    const items = ['a', 'b', 'c', 'd'].map((id) => item({ item_id: `itm-${id}` }));
    api()
      .get('/v1/ext/events')
      .query({ event: 'item.created', pipeline_id: SALES.id, limit: String(FEED_SAMPLE_WINDOW) })
      .reply(200, feedEvents('item.created', items));
    const results = (await appTester(performList, { authData, inputData: { pipeline_id: SALES.id } })) as { id: string }[];
    expect(results.map((r) => r.id)).toEqual(['itm-a', 'itm-b', 'itm-c']);
  });

  test('with no item.created event retained, the sample payload built from the real blueprint is used', async () => {
    const sample = item({ item_id: 'sample-item' });
    api().get('/v1/ext/events').query(true).reply(200, []);
    api().get('/v1/ext/webhooks/sample/items').reply(200, sample);
    expect(await appTester(performList, { authData, inputData: {} })).toEqual([{ id: 'sample-item', ...sample }]);
  });

  test('a key that may manage hooks but not read items still gets the sample payload', async () => {
    api().get('/v1/ext/events').query(true).reply(403, createProblem('insufficient_scope', 'This API key lacks the items:read or tasks:read scope.'));
    api().get('/v1/ext/webhooks/sample/items').reply(200, item({ item_id: 'sample-item' }));
    const results = (await appTester(performList, { authData, inputData: {} })) as { id: string }[];
    expect(results.map((r) => r.id)).toEqual(['sample-item']);
  });

  test('output fields: the built-in item fields plus the custom fields of every pipeline', async () => {
    api().get('/v1/ext/pipelines').reply(200, [SALES, SUPPORT]);
    api().get(`/v1/ext/pipelines/${SALES.id}/fields`).reply(200, SALES_FIELDS);
    api().get(`/v1/ext/pipelines/${SUPPORT.id}/fields`).reply(200, SUPPORT_FIELDS);
    const fields = (await appTester(op.outputFields as never, { authData, inputData: {} })) as { key: string; label: string; type: string }[];
    const keys = fields.map((f) => f.key);
    expect(keys).toEqual([...ITEM_OUTPUT_FIELDS.map((f) => f.key), 'email', 'deal_value', 'severity', 'due_on', 'vip']);
    expect(fields.find((f) => f.key === 'deal_value')).toMatchObject({ label: 'Deal value', type: 'number' });
    expect(fields.find((f) => f.key === 'created_at')).toMatchObject({ label: 'Created At', type: 'datetime' });
  });

  test('output fields with a Pipeline chosen: only its custom fields', async () => {
    api().get(`/v1/ext/pipelines/${SALES.id}/fields`).reply(200, SALES_FIELDS);
    const fields = (await appTester(op.outputFields as never, { authData, inputData: { pipeline_id: SALES.id } })) as { key: string }[];
    expect(fields.slice(ITEM_OUTPUT_FIELDS.length).map((f) => f.key)).toEqual(['email', 'deal_value']);
  });
});

describe('dropdowns (hidden triggers)', () => {
  test('are hidden from users', () => {
    for (const key of ['pipeline_list', 'stage_list', 'status_list'] as const) {
      expect(App.triggers[key].display.hidden).toBe(true);
    }
  });

  test('pipelines: every page of the list, following Link rel="next"', async () => {
    api()
      .get('/v1/ext/pipelines')
      .reply(200, [SUPPORT], { Link: `<${SERVER}/v1/ext/pipelines?cursor=abc>; rel="next"` });
    api().get('/v1/ext/pipelines').query({ cursor: 'abc' }).reply(200, [SALES]);
    const result = await appTester(listPipelines, { authData });
    expect(result).toEqual([SUPPORT, SALES]);
  });

  test('stages of the chosen pipeline, in order', async () => {
    const stages = [
      { id: 'stg-lead', name: 'Lead' },
      { id: 'stg-qualified', name: 'Qualified' },
    ];
    api().get(`/v1/ext/pipelines/${SALES.id}/stages`).reply(200, stages);
    const result = await appTester(listStages, { authData, inputData: { pipeline_id: SALES.id } });
    expect(result).toEqual(stages);
  });

  test('stages without a chosen pipeline: asks to choose one first', async () => {
    const error = await thrown(appTester(listStages, { authData, inputData: {} }));
    expect(error.message).toMatch(/Pipeline \(choose one above first\) is required/);
  });

  test('statuses of the chosen stage', async () => {
    const statuses = [
      { id: 'sts-open', name: 'Open' },
      { id: 'sts-won', name: 'Won' },
    ];
    api().get(`/v1/ext/pipelines/${SALES.id}/stages/stg-lead/statuses`).reply(200, statuses);
    const result = await appTester(listStatuses, {
      authData,
      inputData: { pipeline_id: SALES.id, stage_id: 'stg-lead' },
    });
    expect(result).toEqual(statuses);
  });

  test('ids from users are escaped in paths', async () => {
    api().get('/v1/ext/pipelines/a%2Fb/stages').reply(200, []);
    await appTester(listStages, { authData, inputData: { pipeline_id: 'a/b' } });
  });
});

/**
 * Issue 25 actions against a nock'ed server: Delete Item (DELETE /v1/ext/items/{id}[?version], CONTRACT "Item
 * deletion and erasure") and Create or Update Item (POST /v1/ext/items/upsert, CONTRACT "Upsert"): what is sent,
 * the output, and the messages for 404, 409 (version conflict, ambiguous match) and 422 upsert_unavailable.
 */
import { ItemUpsertSchema, createProblem } from '@stageline/shared';
import { perform as deleteItem } from '../src/creates/delete-item';
import { perform as upsertItem, upsertResultOf } from '../src/creates/upsert-item';
import { App, SALES, SALES_FIELDS, appTester, authData, item, thrown } from './helpers/app';
import { api, useNock } from './helpers/nock';

useNock();

type Field = { key: string; required?: boolean };

describe('Delete Item', () => {
  test('deletes the chosen item (204) and outputs its id', async () => {
    api().delete('/v1/ext/items/itm-1').reply(204);
    expect(await appTester(deleteItem, { authData, inputData: { item_id: ' itm-1 ' } })).toEqual({ id: 'itm-1', item_id: 'itm-1', deleted: true });
  });

  test('sends Version as the version query parameter', async () => {
    api().delete('/v1/ext/items/itm-1').query({ version: '4' }).reply(204);
    await appTester(deleteItem, { authData, inputData: { item_id: 'itm-1', version: '4' } });
  });

  test('an ID with slashes is one path segment (never another endpoint)', async () => {
    api().delete('/v1/ext/items/..%2Fwebhooks%2Fwh-1').reply(404, createProblem('not_found', 'Item was not found.'));
    const error = await thrown(appTester(deleteItem, { authData, inputData: { item_id: '../webhooks/wh-1' } }));
    expect(error.status).toBe(404);
  });

  test('404: says the item is gone already or not this account\'s, and that nothing was deleted', async () => {
    api().delete('/v1/ext/items/itm-9').reply(404, createProblem('not_found', 'Item "itm-9" was not found.'));
    const error = await thrown(appTester(deleteItem, { authData, inputData: { item_id: 'itm-9' } }));
    expect(error).toMatchObject({ status: 404, code: 'not_found' });
    expect(error.message).toMatch(/Stageline has no item itm-9: it was deleted already, or the ID is wrong/);
    expect(error.message).toContain('Nothing was deleted.');
  });

  test('409: says the item changed (current version) and was kept', async () => {
    api()
      .delete('/v1/ext/items/itm-1')
      .query({ version: '2' })
      .reply(409, createProblem('version_conflict', 'Item SALES-1 is at version 3, not 2.', { current_version: 3 }));
    const error = await thrown(appTester(deleteItem, { authData, inputData: { item_id: 'itm-1', version: 2 } }));
    expect(error).toMatchObject({ status: 409, code: 'version_conflict' });
    expect(error.message).toMatch(/^The item was not deleted: it changed since it was read \(Stageline now has version 3/);
  });

  test('404 and 409 end with the request id (body request_id, else the Request-Id header)', async () => {
    api().delete('/v1/ext/items/itm-9').reply(404, { ...createProblem('not_found', 'Item "itm-9" was not found.'), request_id: 'req_8Zq2xWmC1vR4nT7bY0kLdA' });
    const gone = await thrown(appTester(deleteItem, { authData, inputData: { item_id: 'itm-9' } }));
    expect(gone.message).toMatch(/Nothing was deleted\. .*Find Item\)\. \(request req_8Zq2xWmC1vR4nT7bY0kLdA\)$/);
    api()
      .delete('/v1/ext/items/itm-1')
      .query({ version: '2' })
      .reply(409, createProblem('version_conflict', 'Item SALES-1 is at version 3, not 2.', { current_version: 3 }), { 'Request-Id': 'req_Hdr0000000000000000000' });
    const stale = await thrown(appTester(deleteItem, { authData, inputData: { item_id: 'itm-1', version: 2 } }));
    expect(stale.message).toMatch(/delete it regardless\. \(request req_Hdr0000000000000000000\)$/);
  });

  test('a blank item or a Version that is no whole number is refused before any request', async () => {
    expect((await thrown(appTester(deleteItem, { authData, inputData: { item_id: ' ' } }))).message).toContain('Item is required');
    expect((await thrown(appTester(deleteItem, { authData, inputData: { item_id: 'itm-1', version: '2.5' } }))).code).toBe('InvalidData');
  });

  test('other errors read as everywhere else (403 names the scope problem)', async () => {
    api().delete('/v1/ext/items/itm-1').reply(403, createProblem('insufficient_scope', 'This API key lacks the items:write scope.'));
    const error = await thrown(appTester(deleteItem, { authData, inputData: { item_id: 'itm-1' } }));
    expect(error.message).toMatch(/not allowed to do this\. This API key lacks the items:write scope\./);
  });

  test('form: the item picker (required) and an optional Version', () => {
    const fields = App.creates.delete_item.operation.inputFields as Field[];
    expect(fields.map((f) => [f.key, f.required])).toEqual([
      ['item_id', true],
      ['version', false],
    ]);
  });
});

describe('Create or Update Item', () => {
  const body = {
    name: 'Acme: 50 seats',
    pipeline_id: SALES.id,
    stage_id: 'stg-lead',
    source: 'zapier',
    metadata: { email: 'ada@acme.example', deal_value: 1500 },
  };
  const inputData = { pipeline_id: SALES.id, stage_id: 'stg-lead', name: 'Acme: 50 seats', custom__email: 'ada@acme.example', custom__deal_value: '1500' };

  test.each([
    [201, 'created'],
    [200, 'updated'],
    [200, 'unchanged'],
  ] as const)('%s with Stageline-Upsert: %s: the item plus upsert_result', async (status, result) => {
    api().get(`/v1/ext/pipelines/${SALES.id}/fields`).reply(200, SALES_FIELDS);
    api()
      .post('/v1/ext/items/upsert', (sent) => ItemUpsertSchema.safeParse(sent).success && JSON.stringify(sent) === JSON.stringify(body))
      .matchHeader('idempotency-key', /^zap-[0-9a-f]{64}$/)
      .reply(status, item({ item_id: 'itm-4' }), { 'Stageline-Upsert': result });
    expect(await appTester(upsertItem, { authData, inputData })).toEqual({ id: 'itm-4', ...item({ item_id: 'itm-4' }), upsert_result: result });
  });

  test('its Idempotency-Key differs from Create Item\'s for the same body (another action), and repeats on a retry', async () => {
    const keys: string[] = [];
    const record = function (this: { req: { headers: Record<string, unknown> } }) {
      keys.push(String(this.req.headers['idempotency-key']));
      return item();
    };
    api().post('/v1/ext/items/upsert').twice().reply(200, record, { 'Stageline-Upsert': 'unchanged' });
    api().post('/v1/ext/items').reply(201, record);
    const bare = { pipeline_id: SALES.id, stage_id: 'stg-lead', name: 'Bare' };
    await appTester(upsertItem, { authData, inputData: bare });
    await appTester(upsertItem, { authData, inputData: bare });
    await appTester(App.creates.create_item.operation.perform as never, { authData, inputData: bare });
    expect(keys[0]).toBe(keys[1]);
    expect(keys[2]).not.toBe(keys[0]);
  });

  test('409 ambiguous_match: says several items match, lists them, and that nothing changed', async () => {
    api()
      .post('/v1/ext/items/upsert')
      .reply(409, createProblem('ambiguous_match', 'Two items match on email.', { matches: ['itm-1', 'itm-2'] }));
    const error = await thrown(appTester(upsertItem, { authData, inputData: { pipeline_id: SALES.id, stage_id: 'stg-lead', name: 'X' } }));
    expect(error).toMatchObject({ status: 409, code: 'ambiguous_match' });
    expect(error.message).toMatch(/^Several items match this one .* changed nothing\. Two items match on email\. Matching items: itm-1, itm-2\./);
    expect(error.message).not.toMatch(/Version/);
  });

  test('422 upsert_unavailable: says what the pipeline\'s duplicate detection needs', async () => {
    api().post('/v1/ext/items/upsert').reply(422, createProblem('upsert_unavailable', 'Pipeline "Sales" has no duplicate detection.'));
    const error = await thrown(appTester(upsertItem, { authData, inputData: { pipeline_id: SALES.id, stage_id: 'stg-lead', name: 'X' } }));
    expect(error).toMatchObject({ status: 422, code: 'upsert_unavailable' });
    expect(error.message).toMatch(/cannot tell whether this item exists already\. Pipeline "Sales" has no duplicate detection\. Fill the fields/);
  });

  test('the result without the header (a proxy dropped it): 201 created, else updated', () => {
    expect(upsertResultOf(201, undefined)).toBe('created');
    expect(upsertResultOf(200, null)).toBe('updated');
    expect(upsertResultOf(200, ' Unchanged ')).toBe('unchanged');
    expect(upsertResultOf(200, 'deleted')).toBe('updated');
  });

  test('form: exactly the inputs of Create Item (custom fields included); output names the result', async () => {
    api().get(`/v1/ext/pipelines/${SALES.id}/fields`).twice().reply(200, SALES_FIELDS);
    const upsertFields = (await appTester(App.creates.upsert_item.operation.inputFields as never, { authData, inputData: { pipeline_id: SALES.id } })) as Field[];
    const createFields = (await appTester(App.creates.create_item.operation.inputFields as never, { authData, inputData: { pipeline_id: SALES.id } })) as Field[];
    expect(upsertFields).toEqual(createFields);
    expect(upsertFields.map((f) => f.key)).toContain('custom__deal_value');
    const output = (App.creates.upsert_item.operation.outputFields as unknown[]).filter((f): f is { key: string; label: string } => typeof f === 'object');
    expect(output.find((f) => f.key === 'upsert_result')!.label).toMatch(/created, updated or unchanged/);
  });
});

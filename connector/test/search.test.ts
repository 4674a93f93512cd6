import { perform as findDuplicates } from '../src/searches/find-duplicate-items';
import { App, SALES, SALES_FIELDS, appTester, authData, item } from './helpers/app';
import { api, useNock } from './helpers/nock';

useNock();

const search = App.searches.find_duplicate_items;

describe('Find Duplicate Items', () => {
  test("compares the given values using the pipeline's duplicate detection and returns the matches with ids", async () => {
    const match = { ...item({ item_id: 'itm-4' }), matched_on: ['email'] };
    api().get(`/v1/ext/pipelines/${SALES.id}/fields`).reply(200, SALES_FIELDS);
    api()
      .post('/v1/ext/items/check-duplicates', { pipeline_id: SALES.id, name: 'Acme', metadata: { email: 'ADA@acme.example' } })
      .reply(200, [match]);
    const result = await appTester(findDuplicates, {
      authData,
      inputData: { pipeline_id: SALES.id, name: 'Acme', custom__email: 'ADA@acme.example', custom__deal_value: '' },
    });
    expect(result).toEqual([{ id: 'itm-4', ...match }]);
  });

  test('no match is an empty result (Zapier then offers to create the item)', async () => {
    api().post('/v1/ext/items/check-duplicates', { pipeline_id: SALES.id, name: 'Nobody' }).reply(200, []);
    expect(await appTester(findDuplicates, { authData, inputData: { pipeline_id: SALES.id, name: 'Nobody' } })).toEqual([]);
  });

  test('a required custom field is optional in the search', async () => {
    api().get(`/v1/ext/pipelines/${SALES.id}/fields`).reply(200, SALES_FIELDS);
    api().post('/v1/ext/items/check-duplicates', { pipeline_id: SALES.id, metadata: { deal_value: 10 } }).reply(200, []);
    await appTester(findDuplicates, { authData, inputData: { pipeline_id: SALES.id, custom__deal_value: '10' } });
  });

  test('is paired with Create Item as "Find or Create Item"', () => {
    expect(search.display).toMatchObject({ label: 'Find Duplicate Items', description: expect.stringMatching(/^Finds /) });
    expect(App.searchOrCreates!.find_duplicate_items).toMatchObject({
      key: 'find_duplicate_items',
      search: 'find_duplicate_items',
      create: 'create_item',
    });
  });

  test('output fields include matched_on', async () => {
    api().get(`/v1/ext/pipelines/${SALES.id}/fields`).reply(200, SALES_FIELDS);
    const fields = (await appTester(search.operation.outputFields as never, { authData, inputData: { pipeline_id: SALES.id } })) as { key: string }[];
    expect(fields.map((f) => f.key)).toEqual(expect.arrayContaining(['item_id', 'matched_on', 'email', 'deal_value']));
  });
});

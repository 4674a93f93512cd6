import { createProblem } from '@stageline/shared';
import { perform as createItemPerform } from '../src/creates/create-item';
import { perform as updateItemPerform } from '../src/creates/update-item';
import { App, SALES, SALES_FIELDS, SUPPORT, SUPPORT_FIELDS, appTester, authData, item, thrown } from './helpers/app';
import { api, useNock } from './helpers/nock';

useNock();

const createItem = App.creates.create_item.operation;
const updateItem = App.creates.update_item.operation;

type Field = { key: string; type?: string; required?: boolean; dynamic?: string; dependsOn?: string[]; altersDynamicFields?: boolean; choices?: unknown };

describe('Create Item', () => {
  test('form: pipeline, stage and status dropdowns chained by dependsOn, then name and contact, the idempotency key last', async () => {
    const fields = (await appTester(createItem.inputFields as never, { authData, inputData: {} })) as Field[];
    expect(fields.map((f) => f.key)).toEqual(['pipeline_id', 'stage_id', 'status_id', 'name', 'contact_id', 'idempotency_key']);
    expect(fields[5]).toMatchObject({ required: false, type: 'string' });
    const [pipeline, stage, status] = fields;
    expect(pipeline).toMatchObject({ dynamic: 'pipeline_list.id.name', required: true, altersDynamicFields: true });
    expect(stage).toMatchObject({ dynamic: 'stage_list.id.name', required: true, dependsOn: ['pipeline_id'], altersDynamicFields: true });
    expect(status).toMatchObject({ dynamic: 'status_list.id.name', required: false, dependsOn: ['pipeline_id', 'stage_id'] });
  });

  test("form: once a pipeline is chosen, its blueprint's custom fields follow", async () => {
    api().get(`/v1/ext/pipelines/${SUPPORT.id}/fields`).reply(200, SUPPORT_FIELDS);
    const fields = (await appTester(createItem.inputFields as never, { authData, inputData: { pipeline_id: SUPPORT.id } })) as Field[];
    const custom = fields.slice(5);
    expect(custom.map((f) => [f.key, f.type])).toEqual([
      ['custom__email', 'string'],
      ['custom__severity', 'string'],
      ['custom__due_on', 'datetime'],
      ['custom__vip', 'boolean'],
      ['idempotency_key', 'string'],
    ]);
    expect(custom[1]!.choices).toEqual([
      { value: 'Low', label: 'Low', sample: 'Low' },
      { value: 'High', label: 'High', sample: 'High' },
    ]);
  });

  test('form: a required custom field is required here', async () => {
    api().get(`/v1/ext/pipelines/${SALES.id}/fields`).reply(200, SALES_FIELDS);
    const fields = (await appTester(createItem.inputFields as never, { authData, inputData: { pipeline_id: SALES.id } })) as Field[];
    expect(fields.find((f) => f.key === 'custom__email')).toMatchObject({ required: true });
    expect(fields.find((f) => f.key === 'custom__deal_value')).toMatchObject({ required: false, type: 'number' });
  });

  test('sends custom values in metadata with their blueprint types, source zapier, and returns the item with id', async () => {
    const created = item({ item_id: 'itm-9', deal_value: 1500 });
    api().get(`/v1/ext/pipelines/${SALES.id}/fields`).reply(200, SALES_FIELDS);
    api()
      .post('/v1/ext/items', {
        name: 'Acme: 50 seats',
        pipeline_id: SALES.id,
        stage_id: 'stg-lead',
        contact_id: 'crm-1187',
        source: 'zapier',
        metadata: { email: 'ada@acme.example', deal_value: 1500 },
      })
      .reply(201, created);
    const result = await appTester(createItemPerform, {
      authData,
      inputData: {
        pipeline_id: SALES.id,
        stage_id: 'stg-lead',
        status_id: '',
        name: 'Acme: 50 seats',
        contact_id: ' crm-1187 ',
        custom__email: 'ada@acme.example',
        custom__deal_value: '1500',
      },
    });
    expect(result).toEqual({ id: 'itm-9', ...created });
  });

  test('without custom values the blueprint is not fetched and no metadata is sent', async () => {
    api()
      .post('/v1/ext/items', { name: 'Bare', pipeline_id: SALES.id, stage_id: 'stg-lead', status_id: 'sts-won', source: 'zapier' })
      .reply(201, item());
    await appTester(createItemPerform, {
      authData,
      inputData: { pipeline_id: SALES.id, stage_id: 'stg-lead', status_id: 'sts-won', name: 'Bare', custom__deal_value: '' },
    });
  });

  test('a custom value of the wrong type is refused before anything is created', async () => {
    api().get(`/v1/ext/pipelines/${SALES.id}/fields`).reply(200, SALES_FIELDS);
    const error = await thrown(
      appTester(createItemPerform, {
        authData,
        inputData: { pipeline_id: SALES.id, stage_id: 'stg-lead', name: 'X', custom__email: 'ada@acme.example', custom__deal_value: 'a lot' },
      }),
    );
    expect(error).toMatchObject({ code: 'InvalidData', status: 400 });
    expect(error.message).toContain('Deal value (deal_value) must be a number');
  });

  test('a missing name is refused with the contract message', async () => {
    const error = await thrown(appTester(createItemPerform, { authData, inputData: { pipeline_id: SALES.id, stage_id: 'stg-lead' } }));
    expect(error.message).toContain('The item cannot be sent to Stageline:');
    expect(error.message).toContain('- name is required.');
  });

  test("Stageline's 422 (e.g. a stage of another pipeline) is shown with its field list", async () => {
    api()
      .post('/v1/ext/items')
      .reply(
        422,
        createProblem('invalid_reference', 'The item refers to something that does not exist.', {
          errors: [{ path: 'stage_id', message: 'Stage "stg-x" is not a stage of pipeline "Sales".' }],
        }),
      );
    const error = await thrown(appTester(createItemPerform, { authData, inputData: { pipeline_id: SALES.id, stage_id: 'stg-x', name: 'X' } }));
    expect(error.status).toBe(422);
    expect(error.message).toContain('- stage_id: Stage "stg-x" is not a stage of pipeline "Sales".');
  });

  test('has a realistic sample and labelled output fields', () => {
    const op = App.creates.create_item;
    expect(op.display).toMatchObject({ label: 'Create Item', description: expect.stringMatching(/^Creates /) });
    expect(createItem.sample).toMatchObject({ id: expect.any(String), item_id: expect.any(String), pipeline: 'Sales', email: expect.any(String) });
  });
});

describe('Update Item', () => {
  test('sends only the fields that were filled in, with Version as a number', async () => {
    const updated = item({ stage: 'Qualified', stage_id: 'stg-qualified', version: 4 });
    api().patch('/v1/ext/items/itm-1', { stage_id: 'stg-qualified', version: 3 }).reply(200, updated);
    const result = await appTester(updateItemPerform, {
      authData,
      inputData: { item_id: 'itm-1', pipeline_id: SALES.id, stage_id: 'stg-qualified', status_id: '', name: '', version: '3' },
    });
    expect(result).toEqual({ id: 'itm-1', ...updated });
  });

  test('custom values are sent in metadata, coerced with the chosen pipeline; the pipeline itself is not sent', async () => {
    api().get(`/v1/ext/pipelines/${SALES.id}/fields`).reply(200, SALES_FIELDS);
    api().patch('/v1/ext/items/itm-1', { metadata: { deal_value: 2500.5 } }).reply(200, item({ deal_value: 2500.5 }));
    await appTester(updateItemPerform, { authData, inputData: { item_id: 'itm-1', pipeline_id: SALES.id, custom__deal_value: '2500.5' } });
  });

  test('form: custom fields are optional when updating', async () => {
    api().get(`/v1/ext/pipelines/${SALES.id}/fields`).reply(200, SALES_FIELDS);
    const fields = (await appTester(updateItem.inputFields as never, { authData, inputData: { pipeline_id: SALES.id } })) as Field[];
    expect(fields.map((f) => f.key)).toEqual([
      'item_id',
      'pipeline_id',
      'stage_id',
      'status_id',
      'name',
      'contact_id',
      'version',
      'custom__email',
      'custom__deal_value',
    ]);
    expect(fields.filter((f) => f.required).map((f) => f.key)).toEqual(['item_id']);
    expect(fields.find((f) => f.key === 'version')).toMatchObject({ type: 'integer' });
  });

  test('custom values without a pipeline: asks to choose the pipeline', async () => {
    const error = await thrown(appTester(updateItemPerform, { authData, inputData: { item_id: 'itm-1', custom__deal_value: '5' } }));
    expect(error.message).toMatch(/Choose the item's Pipeline to update custom fields/);
  });

  test('nothing to change is refused before calling Stageline', async () => {
    const error = await thrown(appTester(updateItemPerform, { authData, inputData: { item_id: 'itm-1', pipeline_id: SALES.id, name: ' ' } }));
    expect(error.message).toContain('Provide at least one field to change.');
  });

  test('a version conflict explains that the item changed and what its version is now', async () => {
    api()
      .patch('/v1/ext/items/itm-1')
      .reply(409, createProblem('version_conflict', 'Item SALES-1 is at version 5, not 3.', { current_version: 5 }));
    const error = await thrown(appTester(updateItemPerform, { authData, inputData: { item_id: 'itm-1', name: 'New name', version: 3 } }));
    expect(error.status).toBe(409);
    expect(error.message).toMatch(/The item changed since it was read: Stageline now has version 5/);
  });
});

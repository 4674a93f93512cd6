/**
 * Pipeline operations and the dropdowns, through n8n-core's executor (WorkflowExecute) and LoadOptionsContext
 * against a scripted Stageline (test/helpers/fake-stageline.ts).
 */
import { loadOptionsContext, runStageline } from './helpers/engine';
import { startFakeStageline, type FakeStageline } from './helpers/fake-stageline';
import { getPipelines, getStages, getStatuses } from '../../n8n/nodes/Stageline/methods/loadOptions';

let api: FakeStageline;
const credential = () => ({ apiKey: 'sk_test', baseUrl: api.url });

beforeAll(async () => {
	api = await startFakeStageline();
});
afterAll(() => api.close());
beforeEach(() => api.reset());

describe('pipeline operations', () => {
	it('getMany follows Link rel="next" and sends the key', async () => {
		api.on('GET /v1/ext/pipelines', (req, base) =>
			req.query.cursor === undefined
				? { body: [{ id: 'p1', name: 'Sales', created_at: '2026-01-01T00:00:00Z' }], headers: { link: `<${base}/v1/ext/pipelines?cursor=c2&limit=500>; rel="next"` } }
				: { body: [{ id: 'p2', name: 'Hiring', created_at: '2026-01-02T00:00:00Z' }] },
		);
		const result = await runStageline(credential(), { resource: 'pipeline', operation: 'getMany' });
		expect(result.error).toBeUndefined();
		expect(result.output.map((p) => p.name)).toEqual(['Sales', 'Hiring']);
		expect(api.requests.map((r) => r.headers['x-api-key'])).toEqual(['sk_test', 'sk_test']);
		expect(api.requests[1]!.query).toEqual({ cursor: 'c2', limit: '500' });
	});

	it('getStages and getStatuses read the chosen pipeline and stage', async () => {
		api.on('GET /v1/ext/pipelines/p1/stages', { body: [{ id: 's1', name: 'Lead' }] });
		api.on('GET /v1/ext/pipelines/p1/stages/s1/statuses', { body: [{ id: 'st1', name: 'Open' }] });
		const stages = await runStageline(credential(), { resource: 'pipeline', operation: 'getStages', pipelineId: 'p1' });
		expect(stages.output).toEqual([{ id: 's1', name: 'Lead' }]);
		const statuses = await runStageline(credential(), { resource: 'pipeline', operation: 'getStatuses', pipelineId: 'p1', stageId: 's1' });
		expect(statuses.output).toEqual([{ id: 'st1', name: 'Open' }]);
	});
});

describe('dropdowns (loadOptions)', () => {
	it('lists pipelines, then the stages of the chosen pipeline, then the statuses of the chosen stage', async () => {
		api.on('GET /v1/ext/pipelines', { body: [{ id: 'p1', name: 'Sales', created_at: '2026-01-01T00:00:00Z' }] });
		api.on('GET /v1/ext/pipelines/p1/stages', { body: [{ id: 's1', name: 'Lead' }, { id: 's2', name: 'Won' }] });
		api.on('GET /v1/ext/pipelines/p1/stages/s2/statuses', { body: [{ id: 'st1', name: 'Open' }] });
		const params = { resource: 'item', operation: 'create', pipelineId: 'p1', stageId: 's2' };
		expect(await getPipelines.call(loadOptionsContext(credential(), params))).toEqual([{ name: 'Sales', value: 'p1' }]);
		expect(await getStages.call(loadOptionsContext(credential(), params))).toEqual([
			{ name: 'Lead', value: 's1' },
			{ name: 'Won', value: 's2' },
		]);
		expect(await getStatuses.call(loadOptionsContext(credential(), params))).toEqual([{ name: 'Open', value: 'st1' }]);
	});

	it('stays empty until the pipeline is chosen', async () => {
		const params = { resource: 'item', operation: 'create', pipelineId: '' };
		expect(await getStages.call(loadOptionsContext(credential(), params))).toEqual([]);
		expect(await getStatuses.call(loadOptionsContext(credential(), params))).toEqual([]);
		expect(api.requests).toHaveLength(0);
	});
});

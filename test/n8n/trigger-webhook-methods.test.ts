/**
 * The Stageline Trigger's `webhookMethods.default` (nodes/StagelineTrigger/subscriptions.ts) with a hand-built
 * `this` against a stand-in of Stageline's REST hooks endpoints: activation subscribes one hook per event and stores
 * ids and secrets, a restart finds them, deactivation deletes them, and drift (deleted, disabled, other events or
 * URL) makes `checkExists` clean up and answer false.
 */
import type { IDataObject } from 'n8n-workflow';
import { StagelineTrigger } from '../../n8n/nodes/StagelineTrigger/StagelineTrigger.node';
import { startHooksStandIn, type HooksStandIn } from './helpers/hooks-stand-in';
import { hookContext, type HookSetup } from './helpers/trigger-context';

const API_KEY = 'sl_test_key';
const methods = new StagelineTrigger().webhookMethods.default;
let stageline: HooksStandIn;

beforeAll(async () => {
	stageline = await startHooksStandIn(API_KEY);
});
afterAll(() => stageline.close());
beforeEach(() => {
	stageline.subscriptions.length = 0;
	stageline.requests.length = 0;
	stageline.failSubscribeFor.clear();
});

function setup(overrides: Partial<HookSetup> = {}): HookSetup {
	return { baseUrl: stageline.url, apiKey: API_KEY, events: ['item.created', 'task.completed'], webhookUrl: 'http://127.0.0.1:5678/webhook/abc/webhook', staticData: {}, ...overrides };
}

/** The subscriptions stored for `url` (the production URL of setup() unless given). */
function stored(staticData: IDataObject, url = 'http://127.0.0.1:5678/webhook/abc/webhook') {
	return (staticData.stageline as Record<string, Record<string, { id: string; secret: string }>> | undefined)?.[url];
}

describe('create', () => {
	it('subscribes one REST hook per event to the node URL and stores ids and secrets', async () => {
		const s = setup();
		await expect(methods.create.call(hookContext(s))).resolves.toBe(true);
		expect(stageline.subscriptions.map((x) => [x.event, x.target_url])).toEqual([
			['item.created', s.webhookUrl],
			['task.completed', s.webhookUrl],
		]);
		const subs = stored(s.staticData)!;
		expect(Object.keys(subs)).toEqual(['item.created', 'task.completed']);
		expect(subs['item.created']!.id).toBe(stageline.subscriptions[0]!.id);
		expect(subs['item.created']!.secret).toMatch(/^whsec_/);
	});

	it('deletes the hooks made so far when one subscribe fails, and rethrows', async () => {
		stageline.failSubscribeFor.add('task.completed');
		const s = setup();
		await expect(methods.create.call(hookContext(s))).rejects.toThrow(/Check the pipeline|could not use/i);
		expect(stageline.subscriptions).toEqual([]);
		expect(s.staticData.stageline).toBeUndefined();
	});

	it('refuses to activate without events', async () => {
		await expect(methods.create.call(hookContext(setup({ events: [] })))).rejects.toThrow('Choose at least one event');
		expect(stageline.requests).toEqual([]);
	});

	it('says what to do when the key is refused', async () => {
		await expect(methods.create.call(hookContext(setup({ apiKey: 'wrong' })))).rejects.toThrow(/did not accept the API key/);
	});
});

describe('checkExists', () => {
	it('is false before activation, without calling Stageline', async () => {
		await expect(methods.checkExists.call(hookContext(setup()))).resolves.toBe(false);
		expect(stageline.requests).toEqual([]);
	});

	it('finds the stored hooks after a restart (GET /v1/ext/webhooks)', async () => {
		const s = setup();
		await methods.create.call(hookContext(s));
		stageline.requests.length = 0;
		await expect(methods.checkExists.call(hookContext(s))).resolves.toBe(true);
		expect(stageline.requests).toEqual(['GET /v1/ext/webhooks']);
		expect(stageline.subscriptions).toHaveLength(2);
	});

	it('is false when a stored hook was deleted in Stageline, and deletes the others', async () => {
		const s = setup();
		await methods.create.call(hookContext(s));
		stageline.subscriptions.splice(0, 1);
		await expect(methods.checkExists.call(hookContext(s))).resolves.toBe(false);
		expect(stageline.subscriptions).toEqual([]);
		expect(s.staticData.stageline).toBeUndefined();
	});

	it('is false when Stageline disabled a hook (its target failed for days)', async () => {
		const s = setup();
		await methods.create.call(hookContext(s));
		stageline.subscriptions[1]!.disabled_at = new Date().toISOString();
		await expect(methods.checkExists.call(hookContext(s))).resolves.toBe(false);
		expect(stageline.subscriptions).toEqual([]);
	});

	it('is false when the events changed since activation, and deletes the old hooks', async () => {
		const s = setup();
		await methods.create.call(hookContext(s));
		await expect(methods.checkExists.call(hookContext({ ...s, events: ['item.created'] }))).resolves.toBe(false);
		expect(stageline.subscriptions).toEqual([]);
	});

	it('keeps the production hooks while the editor listens on the test URL, and the other way round', async () => {
		const s = setup();
		const test = { ...s, webhookUrl: 'http://127.0.0.1:5678/webhook-test/abc/webhook' };
		await methods.create.call(hookContext(s));
		await expect(methods.checkExists.call(hookContext(test))).resolves.toBe(false);
		await methods.create.call(hookContext(test));
		expect(stageline.subscriptions).toHaveLength(4);
		await expect(methods.delete.call(hookContext(test))).resolves.toBe(true);
		expect(stageline.subscriptions.map((x) => x.target_url)).toEqual([s.webhookUrl, s.webhookUrl]);
		await expect(methods.checkExists.call(hookContext(s))).resolves.toBe(true);
		expect(stored(s.staticData, test.webhookUrl)).toBeUndefined();
	});
});

describe('delete', () => {
	it('deletes every stored hook and forgets them', async () => {
		const s = setup();
		await methods.create.call(hookContext(s));
		await expect(methods.delete.call(hookContext(s))).resolves.toBe(true);
		expect(stageline.subscriptions).toEqual([]);
		expect(s.staticData.stageline).toBeUndefined();
	});

	it('counts a hook Stageline no longer has (404) as deleted', async () => {
		const s = setup();
		await methods.create.call(hookContext(s));
		stageline.subscriptions.splice(0, 1);
		await expect(methods.delete.call(hookContext(s))).resolves.toBe(true);
		expect(stageline.subscriptions).toEqual([]);
	});

	it('keeps a hook it could not delete (key refused) and answers false', async () => {
		const s = setup();
		await methods.create.call(hookContext(s));
		await expect(methods.delete.call(hookContext({ ...s, apiKey: 'wrong' }))).resolves.toBe(false);
		expect(Object.keys(stored(s.staticData)!)).toHaveLength(2);
		await expect(methods.delete.call(hookContext(s))).resolves.toBe(true);
	});

	it('is true when nothing is stored', async () => {
		await expect(methods.delete.call(hookContext(setup()))).resolves.toBe(true);
		expect(stageline.requests).toEqual([]);
	});
});

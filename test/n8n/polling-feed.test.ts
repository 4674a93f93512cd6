/**
 * The Stageline Polling Trigger's paging rules (n8n/nodes/StagelinePollingTrigger/feed.ts) on n8n-core's PollContext
 * against a scripted events feed (the real-server behaviour is test/n8n/events-batch-live.test.ts): at most 1,000
 * events per poll and the cursor on the last one emitted; pages the server examined without a match (an empty page
 * with `Link: rel="next"`) move the cursor to the link's `after`; a failed request keeps the cursor (the next poll
 * reads the same window); no event chosen is an error.
 */
import { activePollingWorkflow } from './helpers/engine';
import { problem, startFakeStageline, type FakeStageline, type RecordedRequest } from './helpers/fake-stageline';
import { MAX_EVENTS_PER_POLL } from '../../n8n/nodes/StagelinePollingTrigger/feed';
import { StagelinePollingTrigger } from '../../n8n/nodes/StagelinePollingTrigger/StagelinePollingTrigger.node';
import { StagelineTrigger, TRIGGER_EVENTS } from '../../n8n/nodes/StagelineTrigger/StagelineTrigger.node';

let api: FakeStageline;
const credential = () => ({ apiKey: 'sk_test', baseUrl: api.url });
const ALL_EVENTS = ['item.created', 'item.updated', 'item.stage_changed', 'item.deleted', 'task.created', 'task.updated', 'task.completed', 'note.created', 'note.updated', 'note.deleted'];

/** Event number `n` of the scripted feed (ids e1, e2, ... in commit order). */
const event = (n: number) => ({ event_id: `e${n}`, event: 'item.created', occurred_at: '2026-11-27T08:00:00.000Z', resource_id: `i${n}`, data: { item_id: `i${n}`, name: `Item ${n}` } });

/**
 * A feed of `total` events after e0, of which those `matches` accepts are returned; each page examines at most
 * `scan` events (as the server's bounded read) and links to the next with `after=<last examined>`.
 */
function feed(total: number, matches: (n: number) => boolean = () => true, scan = 500) {
	return (req: RecordedRequest, base: string) => {
		if (req.query.after === undefined) return { body: total > 0 ? [event(total)] : [] }; // newest first, limit 1
		const from = Number(req.query.after.slice(1));
		const limit = Number(req.query.limit);
		const results = [];
		let n = from;
		while (n < total && results.length < limit && n - from < scan) {
			n++;
			if (matches(n)) results.push(event(n));
		}
		// the next URL carries the whole query, with `after` moved on (as the server's Link)
		const next = new URLSearchParams({ ...req.query, after: `e${n}` });
		const headers: Record<string, string> = n < total ? { link: `<${base}/v1/ext/events?${next}>; rel="next"` } : {};
		return { body: results, headers };
	};
}

beforeAll(async () => {
	api = await startFakeStageline();
});
afterAll(() => api.close());
beforeEach(() => api.reset());
afterEach(() => expect(api.violations).toEqual([])); // every feed query fits the contract's schema

it(`emits at most ${MAX_EVENTS_PER_POLL} events per poll, oldest first, and the rest on the next poll`, async () => {
	api.on('GET /v1/ext/events', feed(0));
	const active = activePollingWorkflow(credential(), { events: ALL_EVENTS });
	expect(await active.poll()).toBeNull();
	active.setStatic('lastEventId', 'e0');
	api.on('GET /v1/ext/events', feed(1200));
	api.requests.length = 0;
	const first = await active.poll();
	expect(first).toHaveLength(MAX_EVENTS_PER_POLL);
	expect(first![0]).toEqual({ event: 'item.created', event_id: 'e1', occurred_at: '2026-11-27T08:00:00.000Z', item_id: 'i1', name: 'Item 1' });
	expect(first![999]!.event_id).toBe('e1000');
	expect(active.staticData().lastEventId).toBe('e1000');
	expect(api.requests.map((r) => r.query)).toEqual([
		{ after: 'e0', limit: '500' },
		{ after: 'e500', limit: '500' },
	]);
	const second = await active.poll();
	expect(second!.map((e) => e.event_id)).toEqual(Array.from({ length: 200 }, (_, i) => `e${1001 + i}`));
	expect(active.staticData().lastEventId).toBe('e1200');
	expect(await active.poll()).toBeNull();
});

it('pages examined without a match move the cursor to the Link\'s after; a quiet end moves it to the newest event', async () => {
	// only e1,250 matches the filter; the server examines 500 events per page
	api.on('GET /v1/ext/events', feed(1300, (n) => n === 1250));
	const active = activePollingWorkflow(credential(), { events: ['item.created'] });
	expect(await active.poll()).toBeNull();
	expect(active.staticData().lastEventId).toBe('e1300'); // activation: the newest event
	active.setStatic('lastEventId', 'e0');
	api.requests.length = 0;
	const events = await active.poll();
	expect(events!.map((e) => e.event_id)).toEqual(['e1250']);
	expect(active.staticData().lastEventId).toBe('e1250');
	// the filtered poll read the newest event first, then pages after e0, e500, e1000
	expect(api.requests.map((r) => [r.query.after ?? 'newest', r.query.event ?? ''])).toEqual([
		['newest', ''],
		['e0', 'item.created'],
		['e500', 'item.created'],
		['e1000', 'item.created'],
	]);
	api.requests.length = 0;
	expect(await active.poll()).toBeNull();
	expect(active.staticData().lastEventId).toBe('e1300'); // nothing matched up to the newest event
});

it('a failed request fails the poll and keeps the cursor, so the next poll reads the same events', async () => {
	api.on('GET /v1/ext/events', feed(3));
	const active = activePollingWorkflow(credential(), { events: ALL_EVENTS });
	expect(await active.poll()).toBeNull();
	active.setStatic('lastEventId', 'e1');
	api.on('GET /v1/ext/events', problem(503, 'internal', 'Try again'));
	await expect(active.poll()).rejects.toMatchObject({ httpCode: '503' });
	expect(active.staticData().lastEventId).toBe('e1');
	api.on('GET /v1/ext/events', feed(3));
	expect((await active.poll())!.map((e) => e.event_id)).toEqual(['e2', 'e3']);
});

it('no event chosen is an error that says what to do', async () => {
	const active = activePollingWorkflow(credential(), { events: [] });
	await expect(active.poll()).rejects.toThrow('Choose at least one event under Events.');
	expect(api.requests).toHaveLength(0);
});

it('offers the Stageline Trigger\'s events and its Pipeline dropdown', () => {
	const polling = new StagelinePollingTrigger().description;
	const webhook = new StagelineTrigger().description;
	const param = (d: typeof polling, name: string) => d.properties.find((p) => p.name === name);
	expect(polling.polling).toBe(true);
	expect(param(polling, 'events')?.options).toEqual(TRIGGER_EVENTS);
	expect(param(polling, 'events')?.options).toEqual(param(webhook, 'events')?.options);
	expect(param(polling, 'pipelineId')?.typeOptions).toEqual(param(webhook, 'pipelineId')?.typeOptions);
	expect(new StagelinePollingTrigger().methods.loadOptions.getPipelineFilter).toBe(new StagelineTrigger().methods.loadOptions.getPipelineFilter);
});

/**
 * The Stageline Polling Trigger's `poll()` (issue 31 item 5; CONTRACT "Events feed (catch up without a public URL)"):
 * follows `GET /v1/ext/events?after=<event_id>` (commit order, `Link: rel="next"`) from a cursor kept in the node's
 * static data, so an n8n that Stageline cannot reach (a laptop, behind a firewall) still gets every event, once, in
 * the order deliveries follow.
 *
 * - First activation: the cursor becomes the newest event (nothing old is emitted). With an empty feed it stays
 *   null, and the first poll that finds events emits every matching one (all are newer than the activation).
 * - Each poll: the matching events after the cursor, oldest first, at most MAX_EVENTS_PER_POLL (or what the poll
 *   budget allows); the rest come on the next poll. The cursor moves to the last event emitted, or, when a page
 *   was examined without a match, to the `after` of its `Link: rel="next"`.
 * - Filters (`event`, `pipeline_id`) are the feed's. A filtered poll first reads the newest event of the whole feed;
 *   when the filtered read then finds nothing up to the feed's end, the cursor moves to that newest event (every
 *   event up to it was examined and none matched). So a quiet filter never leaves the cursor on an old event that
 *   retention purges (a false `cursor_expired`), and no event is skipped: the newest is read before the filtered scan.
 * - `410 cursor_expired` (the cursor's event is no longer retained: n8n was off longer than the retention period):
 *   the poll emits an item `{ event: "events_missed", ... }` after whatever it had read, and restarts from the
 *   feed's newest event. Emitted, not thrown: n8n keeps a poll's cursor only when the poll succeeds, so a thrown
 *   error would repeat the 410 on every poll, and a workflow can route the item (e.g. start a full resync).
 * - Manual mode ("Fetch Test Event"): the newest matching event, without reading or moving the cursor; none is a
 *   NodeOperationError saying so (n8n's own polling triggers' convention: "No data with the current filter").
 */
import { NodeApiError, NodeOperationError, type IDataObject, type INodeExecutionData, type IPollFunctions } from 'n8n-workflow';
import type { EventName, FeedEvent } from '@stageline/shared';
import { apiPath } from '../shared/server-url';
import { compact, listPage, MAX_PAGE_LIMIT, withLimit, type ApiRequest, type ListPage } from '../shared/transport';
import { TRIGGER_EVENTS } from '../StagelineTrigger/events';

/** The most events one poll emits (the rest come on the next poll, so an execution stays a manageable size). */
export const MAX_EVENTS_PER_POLL = 1000;

/** The `event` of the item a poll emits when the cursor expired (CONTRACT "Events feed": `410 cursor_expired`). */
export const EVENTS_MISSED = 'events_missed';

/** What the node keeps in its static data between polls. */
export interface FeedCursorState extends IDataObject {
	/** The `event_id` the next poll reads after; null when the feed was empty at activation. */
	lastEventId?: string | null;
	/** Set on the first poll after activation. */
	started?: boolean;
}

/** The node's filter parameters as feed query parameters. */
interface FeedFilter {
	/** `event` (comma-separated names) and `pipeline_id`, only those that filter. */
	qs: IDataObject;
	/** Whether the filter may exclude events the key can read (then a poll reads the feed's newest event first). */
	filtered: boolean;
}

/** The chosen events and pipeline as the feed's `event` and `pipeline_id`. @throws NodeOperationError when no event is chosen. */
export function feedFilter(context: IPollFunctions): FeedFilter {
	const raw = context.getNodeParameter('events', []) as unknown;
	const events = (Array.isArray(raw) ? raw : []).filter((e): e is EventName => typeof e === 'string' && e !== '');
	if (events.length === 0) throw new NodeOperationError(context.getNode(), 'Choose at least one event under Events.');
	const pipelineRaw = context.getNodeParameter('pipelineId', '') as unknown;
	const pipelineId = typeof pipelineRaw === 'string' ? pipelineRaw.trim() : '';
	const every = TRIGGER_EVENTS.every((e) => events.includes(e.value));
	return {
		qs: compact({ event: every ? '' : [...new Set(events)].join(','), pipeline_id: pipelineId }),
		filtered: !every || pipelineId !== '',
	};
}

/** One event as an output item: `{ event, event_id, occurred_at, ...data }` (data: the delivery body, as the Stageline Trigger outputs it). */
export function eventItem(event: FeedEvent): INodeExecutionData {
	return { json: { event: event.event, event_id: event.event_id, occurred_at: event.occurred_at, ...(event.data as IDataObject) } };
}

/** The feed's newest event the key can read (no filter), or null when the feed is empty. */
async function newestEvent(context: IPollFunctions, qs: IDataObject = {}): Promise<FeedEvent | null> {
	const page = await listPage<FeedEvent>(context, { url: apiPath('events'), qs: { ...qs, limit: 1 } });
	return page.results[0] ?? null;
}

/** The `after` query parameter of a `Link: rel="next"` URL, or null. */
export function afterOf(next: string): string | null {
	return new URL(next, 'http://placeholder.invalid').searchParams.get('after');
}

/** Whether `error` is the feed's `410 cursor_expired`. */
function isCursorExpired(error: unknown): error is NodeApiError {
	return error instanceof NodeApiError && error.httpCode === '410';
}

/** One page of the feed, or the `410 cursor_expired` that answered it. @throws NodeApiError for any other failure. */
async function pageOrExpired(context: IPollFunctions, request: ApiRequest): Promise<ListPage<FeedEvent> | NodeApiError> {
	return listPage<FeedEvent>(context, request).catch((error: unknown) => {
		if (isCursorExpired(error)) return error;
		throw error;
	});
}

/** The poll's time budget in ms (n8n 2.41+ tells it; older versions: 5 minutes); the poll stops paging at half of it. */
function budgetMs(context: IPollFunctions): number {
	return typeof context.getPollBudgetMs === 'function' ? context.getPollBudgetMs() : 5 * 60_000;
}

/** The events of a poll and where the next one starts. */
interface PollRead {
	events: FeedEvent[];
	cursor: string | null;
	/** The 410 that stopped the read, if any. */
	expired?: NodeApiError;
}

/**
 * The matching events after `from`, oldest first, page by page (at most MAX_EVENTS_PER_POLL, within the budget).
 * @returns the events and the new cursor (the last emitted event, or the `after` of the last page's next link when it
 *   examined events without a match); `expired` when the feed answered 410.
 * @throws NodeApiError for every other failure (the cursor then stays: the next poll repeats the same window).
 */
async function readAfter(context: IPollFunctions, from: string, filter: FeedFilter, newest: FeedEvent | null): Promise<PollRead> {
	const deadline = Date.now() + budgetMs(context) / 2;
	const events: FeedEvent[] = [];
	let cursor = from;
	let request: ApiRequest = { url: apiPath('events'), qs: { ...filter.qs, after: from, limit: Math.min(MAX_PAGE_LIMIT, MAX_EVENTS_PER_POLL) } };
	for (;;) {
		const page = await pageOrExpired(context, request);
		if (page instanceof NodeApiError) return { events, cursor, expired: page };
		const room = MAX_EVENTS_PER_POLL - events.length;
		const taken = page.results.slice(0, room);
		events.push(...taken);
		if (taken.length > 0) cursor = taken[taken.length - 1]!.event_id;
		if (taken.length < page.results.length) return { events, cursor }; // full: the rest next poll
		if (page.next === null) break;
		cursor = afterOf(page.next) ?? cursor;
		if (events.length >= MAX_EVENTS_PER_POLL || Date.now() > deadline) return { events, cursor };
		request = { url: withLimit(page.next, Math.min(MAX_PAGE_LIMIT, MAX_EVENTS_PER_POLL - events.length)), qs: undefined };
	}
	// The end of the feed: nothing matched, so every event up to `newest` (read before this scan) was examined.
	if (events.length === 0 && newest !== null) cursor = newest.event_id;
	return { events, cursor };
}

/**
 * The matching events of a feed that was empty at activation (every event is newer than it), oldest first, and the
 * cursor after them (the newest matching one, else the feed's newest, read before).
 */
async function readFromStart(context: IPollFunctions, filter: FeedFilter): Promise<PollRead> {
	const newest = await newestEvent(context);
	if (newest === null) return { events: [], cursor: null };
	const newestFirst: FeedEvent[] = [];
	let page = await listPage<FeedEvent>(context, { url: apiPath('events'), qs: { ...filter.qs, limit: MAX_PAGE_LIMIT } });
	newestFirst.push(...page.results);
	while (page.next !== null) {
		page = await listPage<FeedEvent>(context, { url: page.next });
		newestFirst.push(...page.results);
	}
	return { events: newestFirst.reverse(), cursor: newestFirst.length > 0 ? newestFirst[newestFirst.length - 1]!.event_id : newest.event_id };
}

/** The item that says events were missed (`410 cursor_expired`) and where the trigger resumed. */
function missedItem(from: string, resumedAfter: string | null, error: NodeApiError): INodeExecutionData {
	return {
		json: {
			event: EVENTS_MISSED,
			missed_after_event_id: from,
			resumed_after_event_id: resumedAfter,
			detected_at: new Date().toISOString(),
			message:
				'Stageline no longer keeps the event this trigger last read (it was off longer than the retention period), so events were missed. The trigger continues with new events; resynchronize what you need (e.g. Stageline → Item → Get Many with Updated After).',
			detail: error.description ?? error.message,
		},
	};
}

/**
 * One poll (see the module comment).
 * @returns the items to start a run with, or null when nothing is new.
 * @throws NodeOperationError when no event is chosen, or (manual mode) when no event matches; NodeApiError for
 *   failed requests other than `410 cursor_expired`.
 */
export async function pollFeed(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
	const filter = feedFilter(this);
	if (this.getMode() === 'manual') {
		const newest = await newestEvent(this, filter.qs);
		if (newest === null) {
			throw new NodeOperationError(this.getNode(), 'No data with the current filter could be found', {
				description: 'Stageline has no event of the chosen kinds (in the chosen pipeline) among the events it keeps. Make such a change in Stageline, then fetch again.',
			});
		}
		return [[eventItem(newest)]];
	}

	const state = this.getWorkflowStaticData('node') as FeedCursorState;
	if (state.started !== true) {
		state.lastEventId = (await newestEvent(this))?.event_id ?? null;
		state.started = true;
		return null;
	}
	const from = typeof state.lastEventId === 'string' ? state.lastEventId : null;
	let read: PollRead;
	if (from === null) {
		read = await readFromStart(this, filter);
	} else {
		const newest = filter.filtered ? await newestEvent(this) : null;
		read = await readAfter(this, from, filter, newest);
	}
	const items = read.events.map(eventItem);
	if (read.expired !== undefined) {
		const restart = (await newestEvent(this))?.event_id ?? null;
		items.push(missedItem(read.cursor ?? from ?? '', restart, read.expired));
		state.lastEventId = restart;
	} else {
		state.lastEventId = read.cursor;
	}
	return items.length > 0 ? [items] : null;
}

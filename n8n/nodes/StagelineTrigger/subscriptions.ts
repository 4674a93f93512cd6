/**
 * The trigger's REST hooks (spec "REST hooks"; n8n `webhookMethods.default`): one Stageline subscription per chosen
 * event, all pointing at this node's webhook URL. Their ids and signing secrets live in the workflow's static data
 * (`getWorkflowStaticData('node')`, saved with the workflow), as n8n's Pipedrive trigger keeps its hook id, keyed by
 * webhook URL: the editor's "Listen for test event" registers the test URL while the production URL stays
 * subscribed, and neither may touch the other's hooks.
 *
 * n8n calls `create` on activation, `delete` on deactivation, and `checkExists` first, on activation and on every
 * restart (stopping n8n does not call `delete`), so a restart finds the subscriptions instead of adding more.
 */
import { NodeOperationError, type IDataObject, type IHookFunctions } from 'n8n-workflow';
import type { EventName, WebhookFilter, WebhookSubscribe, WebhookSubscription, WebhookSubscriptionCreated } from '@stageline/shared';
import { apiPath } from '../shared/server-url';
import { apiJson, apiRequest, listAll } from '../shared/transport';
import { filterKey, filterParameters, subscriptionFilter } from './filter';

/**
 * One subscription as stored: its id and secret (the secret is shown only once, by the subscribe response), and the
 * `filterKey` of the filter it was made with ('' or absent: none; state saved before filters has none).
 */
export interface StoredSubscription {
	id: string;
	secret: string;
	filter?: string;
}

/** The subscriptions of one webhook URL, by event. */
export type UrlSubscriptions = Partial<Record<EventName, StoredSubscription>>;

/** What the node keeps in static data (member `stageline`): the subscriptions of each webhook URL it registered. */
export type TriggerState = Record<string, UrlSubscriptions>;

/** The node's stored state ({} when it holds none). */
export function storedState(staticData: IDataObject): TriggerState {
	return (staticData.stageline as TriggerState | undefined) ?? {};
}

/** Every signing secret the node holds, whichever URL it was subscribed for (a delivery may be signed by any). */
export function storedSecrets(staticData: IDataObject): string[] {
	return Object.values(storedState(staticData)).flatMap((subs) => Object.values(subs).map((s) => s!.secret));
}

/** Writes the state back (a top-level assignment, so n8n sees the change and saves it); drops it when empty. */
function saveState(staticData: IDataObject, state: TriggerState): void {
	for (const url of Object.keys(state)) if (Object.keys(state[url]!).length === 0) delete state[url];
	if (Object.keys(state).length === 0) delete staticData.stageline;
	else staticData.stageline = state as unknown as IDataObject;
}

/** The chosen events (parameter `events`), without repeats. */
function chosenEvents(context: IHookFunctions): EventName[] {
	return [...new Set(context.getNodeParameter('events', []) as EventName[])];
}

/**
 * The wanted filter of each chosen event's subscription (filter.ts), from the node's parameters.
 * @throws NodeOperationError for a Stage without its Pipeline.
 */
function wantedFilters(context: IHookFunctions, events: EventName[]): Map<EventName, WebhookFilter | undefined> {
	const params = filterParameters((name, fallback) => context.getNodeParameter(name, fallback));
	const out = new Map<EventName, WebhookFilter | undefined>();
	try {
		for (const event of events) out.set(event, subscriptionFilter(event, params));
	} catch (error) {
		throw new NodeOperationError(context.getNode(), (error as Error).message);
	}
	return out;
}

/** The webhook URL Stageline must call (production or test, whichever n8n is registering). */
function targetUrl(context: IHookFunctions): string {
	const url = context.getNodeWebhookUrl('default');
	if (!url) throw new NodeOperationError(context.getNode(), 'n8n gave the Stageline Trigger no webhook URL.');
	return url;
}

/** True when an error from the transport is Stageline's 404 (the subscription is gone already). */
function isNotFound(error: unknown): boolean {
	return String((error as { httpCode?: unknown }).httpCode) === '404';
}

/**
 * Deletes the subscriptions stored for `url` (DELETE /v1/ext/webhooks/{id}; a 404 counts as deleted) and forgets
 * each one deleted. @returns true when none is left for `url`.
 */
async function unsubscribe(context: IHookFunctions, url: string): Promise<boolean> {
	const staticData = context.getWorkflowStaticData('node');
	const state = storedState(staticData);
	const subs = state[url] ?? {};
	for (const [event, sub] of Object.entries(subs) as Array<[EventName, StoredSubscription]>) {
		try {
			await apiRequest(context, { method: 'DELETE', url: apiPath('webhooks', sub.id) });
		} catch (error) {
			if (!isNotFound(error)) continue; // kept: a later delete tries again
		}
		delete subs[event];
	}
	saveState(staticData, state);
	return Object.keys(subs).length === 0;
}

/**
 * `checkExists`: true when the subscriptions stored for this webhook URL are exactly the chosen events, each with the
 * filter the parameters want now (filter.ts; a changed Pipeline, Stage or field choice subscribes again), and all still
 * exist and deliver there (GET /v1/ext/webhooks, every page; a subscription the server disabled after failing for
 * days counts as missing). Otherwise deletes what is left of them and answers false, so n8n calls `create`.
 * @throws NodeApiError when Stageline cannot be reached or refuses the key.
 */
export async function checkExists(this: IHookFunctions): Promise<boolean> {
	const url = targetUrl(this);
	const subs = storedState(this.getWorkflowStaticData('node'))[url];
	if (!subs || Object.keys(subs).length === 0) return false;
	const events = chosenEvents(this);
	const filters = wantedFilters(this, events);
	const same = (e: EventName) => subs[e] !== undefined && (subs[e]!.filter ?? '') === filterKey(filters.get(e));
	if (Object.keys(subs).length === events.length && events.every(same)) {
		const live = await listAll<WebhookSubscription>(this, { url: apiPath('webhooks') });
		const active = new Set(live.filter((s) => s.disabled_at === null && s.target_url === url).map((s) => s.id));
		if (Object.values(subs).every((sub) => active.has(sub!.id))) return true;
	}
	await unsubscribe(this, url);
	return false;
}

/**
 * `create`: subscribes one REST hook per chosen event (POST /v1/ext/webhooks `{ target_url, event, filter? }`, the
 * filter from the node's options, filter.ts) and stores each id, secret and filter under this webhook URL. When one subscribe fails, deletes those made so far; the error
 * propagates.
 * @throws NodeOperationError when no event is chosen or a Stage lacks its Pipeline; NodeApiError from Stageline (401, 403, 422, ...).
 */
export async function create(this: IHookFunctions): Promise<boolean> {
	const events = chosenEvents(this);
	if (events.length === 0) throw new NodeOperationError(this.getNode(), 'Choose at least one event for the Stageline Trigger.');
	const filters = wantedFilters(this, events);
	const url = targetUrl(this);
	const staticData = this.getWorkflowStaticData('node');
	const state = storedState(staticData);
	const subs: UrlSubscriptions = {};
	state[url] = subs;
	let subscribed = false;
	try {
		for (const event of events) {
			const filter = filters.get(event);
			const body: WebhookSubscribe = filter === undefined ? { target_url: url, event } : { target_url: url, event, filter };
			const created = await apiJson<WebhookSubscriptionCreated>(this, {
				method: 'POST',
				url: apiPath('webhooks'),
				body: body as unknown as IDataObject,
			});
			subs[event] = { id: created.id, secret: created.secret, filter: filterKey(filter) };
			saveState(staticData, state); // stored at once, so a failure later can still delete it
		}
		subscribed = true;
	} finally {
		// A half-done activation leaves nothing behind; the transport's NodeApiError propagates as it is.
		if (!subscribed) await unsubscribe(this, url);
	}
	return true;
}

/**
 * `delete`: deletes every subscription stored for this webhook URL (a 404 counts as deleted).
 * @returns false when Stageline refused one (it stays stored, so the next deactivation or check tries again).
 */
export async function deleteSubscriptions(this: IHookFunctions): Promise<boolean> {
	return unsubscribe(this, targetUrl(this));
}

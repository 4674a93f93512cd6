/**
 * The trigger's REST hooks (spec "REST hooks"; n8n `webhookMethods.default`): one Stageline subscription per chosen
 * event, all pointing at this node's webhook URL. Their ids and signing secrets live in the workflow's static data
 * (`getWorkflowStaticData('node')`, saved with the workflow), as n8n's Pipedrive trigger keeps its hook id.
 *
 * n8n calls `create` on activation, `delete` on deactivation, and `checkExists` first, on activation and on every
 * restart (stopping n8n does not call `delete`), so a restart finds the subscriptions instead of adding more.
 */
import { NodeOperationError, type IDataObject, type IHookFunctions } from 'n8n-workflow';
import type { EventName, WebhookSubscription, WebhookSubscriptionCreated } from '@stageline/shared';
import { apiPath } from '../shared/server-url';
import { apiJson, apiRequest, listAll } from '../shared/transport';

/** One subscription as stored: its id and secret (the secret is shown only once, by the subscribe response). */
export interface StoredSubscription {
	id: string;
	secret: string;
}

/** What the node keeps in static data: the target URL and one subscription per event. */
export interface TriggerState {
	targetUrl: string;
	subscriptions: Partial<Record<EventName, StoredSubscription>>;
}

/** The node's stored state, or null when it holds no subscriptions. */
export function storedState(staticData: IDataObject): TriggerState | null {
	const state = staticData.stageline as TriggerState | undefined;
	return state && Object.keys(state.subscriptions).length > 0 ? state : null;
}

/** The chosen events (parameter `events`), without repeats. */
function chosenEvents(context: IHookFunctions): EventName[] {
	return [...new Set(context.getNodeParameter('events', []) as EventName[])];
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
 * Deletes the stored subscriptions (DELETE /v1/ext/webhooks/{id}; a 404 counts as deleted) and forgets each one
 * deleted. @returns true when none is left.
 */
async function unsubscribeAll(context: IHookFunctions, staticData: IDataObject): Promise<boolean> {
	const state = staticData.stageline as TriggerState | undefined;
	if (!state) return true;
	for (const [event, sub] of Object.entries(state.subscriptions) as Array<[EventName, StoredSubscription]>) {
		try {
			await apiRequest(context, { method: 'DELETE', url: apiPath('webhooks', sub.id) });
		} catch (error) {
			if (!isNotFound(error)) continue; // kept: a later delete tries again
		}
		delete state.subscriptions[event];
	}
	if (Object.keys(state.subscriptions).length > 0) return false;
	delete staticData.stageline;
	return true;
}

/**
 * `checkExists`: true when the stored subscriptions are exactly the chosen events, at this node's URL, and all still
 * exist and deliver (GET /v1/ext/webhooks, every page; a subscription the server disabled after failing for days
 * counts as missing). Otherwise deletes what is left of them and answers false, so n8n calls `create`.
 * @throws NodeApiError when Stageline cannot be reached or refuses the key.
 */
export async function checkExists(this: IHookFunctions): Promise<boolean> {
	const staticData = this.getWorkflowStaticData('node');
	const state = storedState(staticData);
	if (!state) return false;
	const events = chosenEvents(this);
	const stored = Object.keys(state.subscriptions);
	const sameEvents = stored.length === events.length && events.every((e) => state.subscriptions[e] !== undefined);
	if (sameEvents && state.targetUrl === targetUrl(this)) {
		const live = await listAll<WebhookSubscription>(this, { url: apiPath('webhooks') });
		const active = new Set(live.filter((s) => s.disabled_at === null && s.target_url === state.targetUrl).map((s) => s.id));
		if (Object.values(state.subscriptions).every((sub) => sub !== undefined && active.has(sub.id))) return true;
	}
	await unsubscribeAll(this, staticData);
	return false;
}

/**
 * `create`: subscribes one REST hook per chosen event (POST /v1/ext/webhooks `{ target_url, event }`) and stores
 * each id and secret. When one subscribe fails, deletes those made so far; the error propagates.
 * @throws NodeOperationError when no event is chosen; NodeApiError from Stageline (401, 403, 422, ...).
 */
export async function create(this: IHookFunctions): Promise<boolean> {
	const events = chosenEvents(this);
	if (events.length === 0) throw new NodeOperationError(this.getNode(), 'Choose at least one event for the Stageline Trigger.');
	const staticData = this.getWorkflowStaticData('node');
	const state: TriggerState = { targetUrl: targetUrl(this), subscriptions: {} };
	staticData.stageline = state as unknown as IDataObject;
	let subscribed = false;
	try {
		for (const event of events) {
			const created = await apiJson<WebhookSubscriptionCreated>(this, {
				method: 'POST',
				url: apiPath('webhooks'),
				body: { target_url: state.targetUrl, event },
			});
			state.subscriptions[event] = { id: created.id, secret: created.secret };
		}
		subscribed = true;
	} finally {
		// A half-done activation leaves nothing behind; the transport's NodeApiError propagates as it is.
		if (!subscribed) await unsubscribeAll(this, staticData);
	}
	return true;
}

/**
 * `delete`: deletes every stored subscription (a 404 counts as deleted).
 * @returns false when Stageline refused one (it stays stored, so the next deactivation or check tries again).
 */
export async function deleteSubscriptions(this: IHookFunctions): Promise<boolean> {
	return unsubscribeAll(this, this.getWorkflowStaticData('node'));
}

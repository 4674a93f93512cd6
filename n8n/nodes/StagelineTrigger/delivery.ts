/**
 * The trigger's `webhook()`: one Stageline delivery (CONTRACT "Events and deliveries": POST with the item or task as
 * body, Standard Webhooks headers and `x-webhook-event`). A delivery whose signature does not verify against this
 * node's secrets, or is older or newer than 5 minutes, is answered 401 and starts no run. A verified delivery of an
 * event the node no longer listens to is answered 200 and starts no run (a 4xx would make Stageline record a
 * failure). Otherwise the run gets one item: `{ event, ...payload }` (with `changed_fields` and `previous` for updates,
 * `deleted_at` for item.deleted and note.deleted, as delivered). The Pipeline / Stage / field options are the subscription's filter
 * (filter.ts): Stageline sends nothing else, so deliveries are not filtered again here.
 */
import type { IDataObject, IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';
import type { EventName } from '@stageline/shared';
import { WEBHOOK_EVENT_HEADER, WEBHOOK_ID_HEADER, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER, verifyDelivery } from './signature';
import { storedSecrets } from './subscriptions';

/** Answers the request directly with `status` and a JSON body; no run starts. */
function answer(context: IWebhookFunctions, status: number, body: IDataObject): IWebhookResponseData {
	context.getResponseObject().status(status).json(body);
	return { noWebhookResponse: true };
}

/** One header as a string ('' when missing; the first value when repeated). */
function header(headers: IDataObject, name: string): string {
	const value = headers[name];
	return Array.isArray(value) ? String(value[0] ?? '') : typeof value === 'string' ? value : '';
}

/**
 * Handles one delivery.
 * @returns a run with `[{ json: { event, ...payload } }]`, or no run after answering 401 (bad, stale or missing
 *   signature) or 200 (event not chosen).
 */
export async function handleDelivery(this: IWebhookFunctions): Promise<IWebhookResponseData> {
	const request = this.getRequestObject();
	const headers = this.getHeaderData() as IDataObject;
	const secrets = storedSecrets(this.getWorkflowStaticData('node'));
	const rawBody = Buffer.isBuffer(request.rawBody) ? request.rawBody : Buffer.from('');
	const verdict = verifyDelivery(
		{
			id: header(headers, WEBHOOK_ID_HEADER),
			timestamp: header(headers, WEBHOOK_TIMESTAMP_HEADER),
			signature: header(headers, WEBHOOK_SIGNATURE_HEADER),
			rawBody,
		},
		secrets,
		Math.floor(Date.now() / 1000),
	);
	if (!verdict.ok) return answer(this, 401, { error: 'invalid_signature', detail: verdict.reason });

	const event = header(headers, WEBHOOK_EVENT_HEADER) as EventName;
	const events = this.getNodeParameter('events', []) as EventName[];
	if (!events.includes(event)) return answer(this, 200, { status: 'ignored', detail: `Not listening to ${event || 'this event'}.` });
	const payload = this.getBodyData() as IDataObject;
	return { workflowData: [[{ json: { event, ...payload } }]] };
}

/**
 * A stand-in for Stageline's REST hooks endpoints (spec "REST hooks") for the trigger's unit tests: POST (body checked
 * with the contract's WebhookSubscribeSchema, `filter` kept), GET and DELETE /v1/ext/webhooks over an in-memory list
 * on a loopback port. `failSubscribeFor` makes POST answer 422 for
 * an event (to test the clean-up of a half-done activation); `requests` records each call.
 */
import crypto from 'node:crypto';
import { WebhookSubscribeSchema } from '@stageline/shared';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { IDataObject, IWebhookResponseData } from 'n8n-workflow';
import { signatureOf } from '../../../n8n/nodes/StagelineTrigger/signature';
import { StagelineTrigger } from '../../../n8n/nodes/StagelineTrigger/StagelineTrigger.node';
import { webhookContext, type HookSetup, type WrittenResponse } from './trigger-context';

/** One stored subscription (the shape GET returns). */
export interface StandInSubscription {
	id: string;
	target_url: string;
	event: string;
	created_at: string;
	disabled_at: string | null;
	disabled_reason: string | null;
	failing_since: string | null;
	next_attempt_at: string | null;
	/** CONTRACT "Subscription filters": the subscription's filter, null when none. */
	filter: Record<string, unknown> | null;
}

/** A running stand-in. */
export interface HooksStandIn {
	url: string;
	subscriptions: StandInSubscription[];
	requests: string[];
	failSubscribeFor: Set<string>;
	close(): Promise<void>;
}

/** Starts the stand-in on an ephemeral loopback port. */
export async function startHooksStandIn(apiKey: string): Promise<HooksStandIn> {
	const subscriptions: StandInSubscription[] = [];
	const requests: string[] = [];
	const failSubscribeFor = new Set<string>();
	const server = http.createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (c: Buffer) => chunks.push(c));
		req.on('end', () => {
			const path = (req.url ?? '').split('?')[0];
			requests.push(`${req.method} ${path}`);
			const send = (status: number, body?: unknown) => {
				res.writeHead(status, { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json' });
				res.end(body === undefined ? '' : JSON.stringify(body));
			};
			if (req.headers['x-api-key'] !== apiKey) return send(401, { code: 'unauthorized', detail: 'Bad key.' });
			if (req.method === 'GET' && path === '/v1/ext/webhooks') return send(200, subscriptions);
			if (req.method === 'POST' && path === '/v1/ext/webhooks') {
				const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { target_url: string; event: string; filter?: Record<string, unknown> | null };
				// the contract's check of the subscribe body (a filter member the server would refuse is a 400 here too)
				const checked = WebhookSubscribeSchema.safeParse(body);
				if (!checked.success) return send(400, { code: 'validation_failed', detail: checked.error.issues.map((i) => i.message).join('; ') });
				if (failSubscribeFor.has(body.event)) return send(422, { code: 'validation_failed', detail: 'No.' });
				const sub: StandInSubscription = {
					id: `wh_${crypto.randomBytes(4).toString('hex')}`,
					target_url: body.target_url,
					event: body.event,
					created_at: new Date().toISOString(),
					disabled_at: null,
					disabled_reason: null,
					failing_since: null,
					next_attempt_at: null,
					filter: body.filter ?? null,
				};
				subscriptions.push(sub);
				return send(201, { ...sub, secret: `whsec_${crypto.randomBytes(32).toString('base64')}` });
			}
			const match = /^\/v1\/ext\/webhooks\/([^/]+)$/.exec(path ?? '');
			if (req.method === 'DELETE' && match) {
				const index = subscriptions.findIndex((s) => s.id === match[1]);
				if (index < 0) return send(404, { code: 'not_found', detail: 'No such webhook.' });
				subscriptions.splice(index, 1);
				return send(204);
			}
			return send(404, { code: 'not_found', detail: 'No route.' });
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}`,
		subscriptions,
		requests,
		failSubscribeFor,
		close: () => new Promise<void>((resolve) => server.close(() => resolve())),
	};
}

/**
 * Test-suite plumbing for trigger tests against the stand-in: starts it before the suite (API key `sl_test_key`),
 * clears its subscriptions and requests before each test, closes it after, and builds a `HookSetup` of the node's
 * production webhook URL for `events` and `parameters`.
 */
export function useHooksStandIn(): {
	hooks: () => HooksStandIn;
	setup: (events: string[], parameters: Record<string, unknown>, staticData?: IDataObject) => HookSetup;
	url: string;
} {
	const apiKey = 'sl_test_key';
	const url = 'http://127.0.0.1:5678/webhook/abc/webhook';
	let hooks: HooksStandIn;
	beforeAll(async () => {
		hooks = await startHooksStandIn(apiKey);
	});
	afterAll(() => hooks.close());
	beforeEach(() => {
		hooks.subscriptions.length = 0;
		hooks.requests.length = 0;
	});
	return {
		hooks: () => hooks,
		url,
		setup: (events, parameters, staticData = {}) => ({ baseUrl: hooks.url, apiKey, events, webhookUrl: url, staticData, parameters }),
	};
}

/**
 * Delivers `payload` as `event` to the trigger's `webhook()`, signed with `secret` as Stageline signs it (now), for a
 * node listening to `events` with `staticData` (which holds the subscriptions' secrets).
 */
export async function deliverSigned(
	secret: string,
	event: string,
	payload: object,
	events: string[],
	staticData: IDataObject,
): Promise<IWebhookResponseData> {
	const raw = Buffer.from(JSON.stringify(payload));
	const ts = String(Math.floor(Date.now() / 1000));
	const headers = { 'webhook-id': 'evt_1', 'webhook-timestamp': ts, 'webhook-signature': signatureOf(secret, 'evt_1', ts, raw), 'x-webhook-event': event };
	const written: WrittenResponse = {};
	return new StagelineTrigger().webhook.call(webhookContext({ headers, rawBody: raw }, { events }, staticData, written));
}

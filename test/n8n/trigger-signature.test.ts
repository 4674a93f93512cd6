/**
 * The Stageline Trigger's signature check (nodes/StagelineTrigger/signature.ts) and its `webhook()` answers
 * (delivery.ts): Standard Webhooks `v1` signatures, a 5-minute tolerance both ways, rotation, 401 with no run.
 */
import crypto from 'node:crypto';
import { SIGNATURE_TOLERANCE_SECONDS, signatureOf, verifyDelivery } from '../../n8n/nodes/StagelineTrigger/signature';
import { StagelineTrigger } from '../../n8n/nodes/StagelineTrigger/StagelineTrigger.node';
import { webhookContext, type WrittenResponse } from './helpers/trigger-context';

const secret = `whsec_${crypto.randomBytes(32).toString('base64')}`;
const otherSecret = `whsec_${crypto.randomBytes(32).toString('base64')}`;
const now = 1_800_000_000;
const body = Buffer.from(JSON.stringify({ item_id: 'itm_1', pipeline_id: 'pl_1', name: 'Ada' }));

/** A delivery signed with `secrets` at `timestamp`. */
function signed(secrets: string[], timestamp = now, id = 'evt_1', raw: Buffer = body) {
	const ts = String(timestamp);
	return { id, timestamp: ts, signature: secrets.map((s) => signatureOf(s, id, ts, raw)).join(' '), rawBody: raw };
}

describe('verifyDelivery', () => {
	it('accepts a delivery signed with the secret', () => {
		expect(verifyDelivery(signed([secret]), [secret], now)).toEqual({ ok: true });
	});

	it('matches what Stageline signs: v1, base64 HMAC-SHA256 of id.timestamp.body keyed with the decoded secret', () => {
		const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
		const expected = crypto.createHmac('sha256', key).update(`evt_1.${now}.${body.toString()}`).digest('base64');
		expect(signatureOf(secret, 'evt_1', String(now), body)).toBe(`v1,${expected}`);
	});

	it('refuses a signature made with another secret (forged)', () => {
		expect(verifyDelivery(signed([otherSecret]), [secret], now)).toMatchObject({ ok: false, reason: expect.stringMatching(/No valid signature/) });
	});

	it('refuses a tampered body, id or timestamp', () => {
		const good = signed([secret]);
		expect(verifyDelivery({ ...good, rawBody: Buffer.from(body.toString().replace('Ada', 'Eve')) }, [secret], now).ok).toBe(false);
		expect(verifyDelivery({ ...good, id: 'evt_2' }, [secret], now).ok).toBe(false);
		expect(verifyDelivery({ ...good, timestamp: String(now + 1) }, [secret], now).ok).toBe(false);
	});

	it('refuses a delivery older than 5 minutes and accepts one at the limit', () => {
		expect(verifyDelivery(signed([secret], now - SIGNATURE_TOLERANCE_SECONDS - 1), [secret], now)).toMatchObject({ ok: false, reason: expect.stringMatching(/too old/) });
		expect(verifyDelivery(signed([secret], now - SIGNATURE_TOLERANCE_SECONDS), [secret], now).ok).toBe(true);
	});

	it('refuses a delivery more than 5 minutes in the future and accepts one at the limit', () => {
		expect(verifyDelivery(signed([secret], now + SIGNATURE_TOLERANCE_SECONDS + 1), [secret], now)).toMatchObject({ ok: false, reason: expect.stringMatching(/future/) });
		expect(verifyDelivery(signed([secret], now + SIGNATURE_TOLERANCE_SECONDS), [secret], now).ok).toBe(true);
	});

	it('accepts either signature during a secret rotation (two in the header)', () => {
		const both = signed([otherSecret, secret]);
		expect(verifyDelivery(both, [secret], now).ok).toBe(true);
		expect(verifyDelivery(both, [otherSecret], now).ok).toBe(true);
		expect(verifyDelivery(both, [`whsec_${crypto.randomBytes(32).toString('base64')}`], now).ok).toBe(false);
	});

	it('names each missing header', () => {
		expect(verifyDelivery({ rawBody: body }, [secret], now)).toEqual({ ok: false, reason: 'Missing webhook-id, webhook-timestamp, webhook-signature header.' });
		expect(verifyDelivery({ ...signed([secret]), signature: '' }, [secret], now)).toEqual({ ok: false, reason: 'Missing webhook-signature header.' });
	});

	it('refuses a timestamp that is not Unix seconds, and signatures of another version', () => {
		expect(verifyDelivery({ ...signed([secret]), timestamp: '2026-11-24T00:00:00Z' }, [secret], now).ok).toBe(false);
		const good = signed([secret]);
		expect(verifyDelivery({ ...good, signature: good.signature.replace('v1,', 'v2,') }, [secret], now).ok).toBe(false);
	});

	it('refuses everything when the node holds no secret (not subscribed)', () => {
		expect(verifyDelivery(signed([secret]), [], now).ok).toBe(false);
	});
});

describe('webhook()', () => {
	const trigger = new StagelineTrigger();
	const staticData = { stageline: { 'http://n8n.test/webhook/x/webhook': { 'item.created': { id: 'wh_1', secret } } } };

	/** Delivers `raw` with headers signed at `timestamp` (seconds) and returns the node's result and direct answer. */
	async function deliver(options: { secrets?: string[]; timestamp?: number; raw?: Buffer; event?: string; pipelineId?: string; headers?: Record<string, string> } = {}) {
		const raw = options.raw ?? body;
		const d = signed(options.secrets ?? [secret], options.timestamp ?? Math.floor(Date.now() / 1000), 'evt_9', raw);
		const headers = options.headers ?? { 'webhook-id': d.id, 'webhook-timestamp': d.timestamp, 'webhook-signature': d.signature, 'x-webhook-event': options.event ?? 'item.created' };
		const written: WrittenResponse = {};
		const result = await trigger.webhook.call(webhookContext({ headers, rawBody: raw }, { events: ['item.created'], pipelineId: options.pipelineId ?? '' }, staticData, written));
		return { result, written };
	}

	it('starts a run with the item and the event name', async () => {
		const { result, written } = await deliver();
		expect(written).toEqual({});
		expect(result.workflowData).toEqual([[{ json: { event: 'item.created', item_id: 'itm_1', pipeline_id: 'pl_1', name: 'Ada' } }]]);
	});

	it('answers 401 and starts no run for a forged, stale or future delivery, or missing headers', async () => {
		const cases = [
			await deliver({ secrets: [otherSecret] }),
			await deliver({ timestamp: Math.floor(Date.now() / 1000) - 301 }),
			await deliver({ timestamp: Math.floor(Date.now() / 1000) + 301 }),
			await deliver({ headers: { 'x-webhook-event': 'item.created' } }),
		];
		for (const { result, written } of cases) {
			expect(result).toEqual({ noWebhookResponse: true });
			expect(written.status).toBe(401);
			expect(written.body).toMatchObject({ error: 'invalid_signature' });
		}
	});

	it('answers 200 without a run for an event it does not listen to', async () => {
		const { result, written } = await deliver({ event: 'task.created' });
		expect(result).toEqual({ noWebhookResponse: true });
		expect(written).toMatchObject({ status: 200, body: { status: 'ignored' } });
	});

	it('does not filter a verified delivery by pipeline again: the subscription filter did (CONTRACT "Subscription filters")', async () => {
		expect((await deliver({ pipelineId: 'pl_1' })).result.workflowData).toHaveLength(1);
		expect((await deliver({ pipelineId: 'pl_2' })).result.workflowData).toHaveLength(1);
	});
});

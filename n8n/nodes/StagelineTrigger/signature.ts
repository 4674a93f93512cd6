/**
 * Standard Webhooks signature check of a Stageline delivery (CONTRACT "Events and deliveries"; standardwebhooks.com):
 * `webhook-signature` holds space-separated `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` entries, keyed with the
 * base64-decoded part of a `whsec_` secret. During a secret rotation the header carries one signature per secret,
 * so a receiver holding either secret verifies. Pure (the clock is a parameter); node:crypto only, as n8n packages
 * may have no runtime dependencies.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Standard Webhooks headers (CONTRACT "Events and deliveries"; the names of @stageline/shared's WEBHOOK_*_HEADER). */
export const WEBHOOK_ID_HEADER = 'webhook-id';
export const WEBHOOK_TIMESTAMP_HEADER = 'webhook-timestamp';
export const WEBHOOK_SIGNATURE_HEADER = 'webhook-signature';
/** Stageline's header naming the event of a delivery (`WEBHOOK_EVENT_HEADER` of @stageline/shared). */
export const WEBHOOK_EVENT_HEADER = 'x-webhook-event';

/** How far a delivery's timestamp may be from the receiver's clock, either way (Standard Webhooks: 5 minutes). */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** The signing secret prefix (`WEBHOOK_SECRET_PREFIX` of @stageline/shared). */
const SECRET_PREFIX = 'whsec_';

/** What a delivery carries for the check: its three headers (any may be missing) and the exact body bytes. */
export interface SignedDelivery {
	id?: string;
	timestamp?: string;
	signature?: string;
	rawBody: Buffer;
}

/** The outcome: accepted, or why not (for the 401 answer's body and n8n's log). */
export type Verification = { ok: true } | { ok: false; reason: string };

/** The HMAC key of a `whsec_` secret: its base64 part decoded (a secret without the prefix is taken as base64 too). */
function keyOf(secret: string): Buffer {
	return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

/** `v1,` + base64 HMAC-SHA256 of `id.timestamp.body` with `secret` (what Stageline sends; also used by tests). */
export function signatureOf(secret: string, id: string, timestamp: string, rawBody: Buffer): string {
	const hmac = createHmac('sha256', keyOf(secret));
	hmac.update(`${id}.${timestamp}.`);
	hmac.update(rawBody);
	return `v1,${hmac.digest('base64')}`;
}

/** Constant-time comparison of two signature strings. */
function sameSignature(a: string, b: string): boolean {
	const x = Buffer.from(a);
	const y = Buffer.from(b);
	return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Checks one delivery against the secrets the receiver holds.
 * @param delivery its headers and exact body.
 * @param secrets `whsec_...` secrets; a signature made with any of them is accepted.
 * @param nowSeconds the receiver's clock, in Unix seconds.
 * @returns `{ ok: true }`, or `{ ok: false, reason }` for a missing header, a timestamp more than
 *   {@link SIGNATURE_TOLERANCE_SECONDS} in the past or the future, or no `v1` signature matching any secret.
 */
export function verifyDelivery(delivery: SignedDelivery, secrets: readonly string[], nowSeconds: number): Verification {
	const { id, timestamp, signature } = delivery;
	if (!id || !timestamp || !signature) {
		return { ok: false, reason: `Missing ${[!id && WEBHOOK_ID_HEADER, !timestamp && WEBHOOK_TIMESTAMP_HEADER, !signature && WEBHOOK_SIGNATURE_HEADER].filter(Boolean).join(', ')} header.` };
	}
	if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'The webhook-timestamp header is not a Unix time in seconds.' };
	const age = nowSeconds - Number(timestamp);
	if (age > SIGNATURE_TOLERANCE_SECONDS) return { ok: false, reason: 'The delivery is too old (timestamp more than 5 minutes ago).' };
	if (age < -SIGNATURE_TOLERANCE_SECONDS) return { ok: false, reason: 'The delivery is from the future (timestamp more than 5 minutes ahead).' };
	const offered = signature.split(' ').filter((part) => part.startsWith('v1,'));
	for (const secret of secrets) {
		const expected = signatureOf(secret, id, timestamp, delivery.rawBody);
		if (offered.some((candidate) => sameSignature(candidate, expected))) return { ok: true };
	}
	return { ok: false, reason: 'No valid signature: the delivery was not signed with this trigger\'s secret.' };
}

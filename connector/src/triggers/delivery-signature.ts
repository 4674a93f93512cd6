/**
 * Verifies a REST-hook delivery before a trigger turns it into Zap runs (CONTRACT "Events and deliveries": Standard
 * Webhooks headers `webhook-id`, `webhook-timestamp`, `webhook-signature` = `v1,` + base64 HMAC-SHA256 of
 * `id.timestamp.body`, keyed with the subscription's `whsec_` secret). The secret is the one the server returned at
 * subscribe, which Zapier keeps in `bundle.subscribeData.secret`. Verification uses the `standardwebhooks` library:
 * constant-time comparison, every signature of the header tried (a secret rotation sends two), and a timestamp
 * tolerance of 5 minutes, so a forged, altered or replayed (stale) delivery is rejected.
 */
import type { Bundle, ZObject } from 'zapier-platform-core';
import { WEBHOOK_ID_HEADER, WEBHOOK_SECRET_PREFIX, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER } from '@stageline/shared';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

/**
 * Header values by lower-case name. Zapier passes a hook request's headers in `rawRequest.headers` with their names
 * capitalised and prefixed `Http-` (e.g. `Http-Webhook-Signature`); plain names are accepted too.
 */
export function deliveryHeaders(headers: Readonly<Record<string, unknown>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (typeof value !== 'string') continue;
    out[name.toLowerCase().replace(/^http-/, '')] = value;
  }
  return out;
}

/**
 * The verified body of the delivery in `bundle.rawRequest` (parsed JSON), or `undefined` when the bundle carries no
 * delivery at all (e.g. `zapier-platform invoke` of a hook trigger, which runs `perform` without one).
 * @throws z.errors.HaltedError (the Zap run stops, nothing is triggered) when the delivery is unsigned, signed with
 *   another secret, altered, or its `webhook-timestamp` is more than 5 minutes from now; or when the Zap has no
 *   signing secret (`subscribeData.secret`), which only a subscription made outside this integration lacks.
 */
export function verifiedDeliveryBody(z: ZObject, bundle: Bundle): unknown {
  const raw = bundle.rawRequest;
  const content = typeof raw?.content === 'string' ? raw.content : undefined;
  if (content === undefined && bundle.cleanedRequest === undefined) return undefined;
  const secret = (bundle.subscribeData as { secret?: unknown } | undefined)?.secret;
  if (typeof secret !== 'string' || !secret.startsWith(WEBHOOK_SECRET_PREFIX)) {
    throw new z.errors.HaltedError(
      'This Zap has no Stageline signing secret to verify deliveries with. Turn the Zap off and on again to subscribe anew.',
    );
  }
  if (content === undefined) throw new z.errors.HaltedError('Ignored a delivery without its raw body: its Stageline signature cannot be checked.');
  const headers = deliveryHeaders(raw?.headers);
  try {
    return new Webhook(secret).verify(content, {
      [WEBHOOK_ID_HEADER]: headers[WEBHOOK_ID_HEADER] ?? '',
      [WEBHOOK_TIMESTAMP_HEADER]: headers[WEBHOOK_TIMESTAMP_HEADER] ?? '',
      [WEBHOOK_SIGNATURE_HEADER]: headers[WEBHOOK_SIGNATURE_HEADER] ?? '',
    });
  } catch (err) {
    const reason = err instanceof WebhookVerificationError ? err.message : 'the body is not JSON';
    throw new z.errors.HaltedError(`Ignored a delivery that does not carry a valid Stageline signature (${reason}).`);
  }
}

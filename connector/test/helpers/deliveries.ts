/**
 * REST-hook deliveries as Zapier hands them to a hook trigger's `perform`: `rawRequest` (the exact body and the
 * headers, named the way Zapier names them: capitalised with an `Http-` prefix), `cleanedRequest` (the parsed body)
 * and `subscribeData` (the subscription returned at subscribe, with its signing secret).
 */
import crypto from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Webhook } from 'standardwebhooks';

/** A signing secret in the server's format: `whsec_` + base64 of 32 random bytes. */
export function newSecret(): string {
  return `whsec_${crypto.randomBytes(32).toString('base64')}`;
}

/** The secret of the unit tests' subscriptions. */
export const SECRET = newSecret();

/** A subscription as POST /webhooks returns it (what Zapier keeps as subscribeData). */
export const SUBSCRIPTION = {
  id: 'wh-1',
  target_url: 'https://hooks.zapier.com/hooks/standard/123/abc/',
  event: 'item.created',
  secret: SECRET,
  created_at: '2026-03-01T09:00:00.000Z',
};

/** `webhook-signature` -> `Http-Webhook-Signature`, as in Zapier's rawRequest. */
function zapierHeaderName(name: string): string {
  return `Http-${name
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('-')}`;
}

/** Bundle fields of a delivery whose raw body and headers arrived as given. */
export function hookBundle(content: string, headers: Record<string, string | string[] | undefined> | IncomingHttpHeaders, secret = SECRET) {
  const rawHeaders: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (typeof value === 'string') rawHeaders[zapierHeaderName(name)] = value;
  let cleanedRequest: unknown = content;
  try {
    cleanedRequest = JSON.parse(content);
  } catch {
    // keep the text, as Zapier does
  }
  return { rawRequest: { method: 'POST' as const, headers: rawHeaders, content }, cleanedRequest, subscribeData: { ...SUBSCRIPTION, secret } };
}

/** Options of `signedDelivery`. */
export interface SignOptions {
  /** Sign with this secret instead of the subscription's (a forgery). */
  signingSecret?: string;
  /** When the delivery was signed (default now). */
  at?: Date;
}

/** A delivery of `body` signed the way the server signs it (server/src/webhooks/signing.ts), as bundle fields. */
export function signedDelivery(body: unknown, options: SignOptions = {}) {
  const content = JSON.stringify(body);
  const id = `evt_${crypto.randomBytes(6).toString('hex')}`;
  const at = options.at ?? new Date();
  const signature = new Webhook(options.signingSecret ?? SECRET).sign(id, at, content);
  return hookBundle(content, {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signature,
    'x-webhook-event': 'item.created',
    'content-type': 'application/json',
  });
}

/** A delivery a live test's receiver got, as Zapier hands it to `perform` for the Zap subscribed as `subscription`. */
export function receivedDelivery(delivery: { raw: string; headers: IncomingHttpHeaders }, subscription: { id: string; secret: string }) {
  return { ...hookBundle(delivery.raw, delivery.headers, subscription.secret), subscribeData: subscription };
}

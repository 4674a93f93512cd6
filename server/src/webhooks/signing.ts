/**
 * Standard Webhooks signing (CONTRACT.md "Events and deliveries"): `webhook-id`, `webhook-timestamp` and
 * `webhook-signature` = `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`, keyed with the decoded `whsec_` secret.
 * During a secret rotation overlap the header carries one signature per secret, space-separated, so receivers
 * holding either secret can verify (Standard Webhooks allows several signatures in one header).
 */
import { Webhook } from "standardwebhooks";
import { WEBHOOK_ID_HEADER, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER } from "@stageline/shared";

/** The three Standard Webhooks headers of one attempt. */
export type SignatureHeaders = Record<typeof WEBHOOK_ID_HEADER | typeof WEBHOOK_TIMESTAMP_HEADER | typeof WEBHOOK_SIGNATURE_HEADER, string>;

/**
 * Signs one delivery attempt.
 * @param messageId the event id: stable across retries, so receivers can dedupe.
 * @param timestamp when the attempt is sent (whole seconds go into the header and the signed content).
 * @param body the exact body bytes that will be sent (as a UTF-8 string).
 * @param secrets the current secret first, then the previous one while its overlap lasts; at least one.
 * @throws when `secrets` is empty or a secret is not valid base64 (a corrupt subscription row).
 */
export function signDelivery(messageId: string, timestamp: Date, body: string, secrets: readonly string[]): SignatureHeaders {
  if (secrets.length === 0) throw new Error("a delivery needs at least one signing secret");
  const signatures = secrets.map((secret) => new Webhook(secret).sign(messageId, timestamp, body));
  return {
    [WEBHOOK_ID_HEADER]: messageId,
    [WEBHOOK_TIMESTAMP_HEADER]: String(Math.floor(timestamp.getTime() / 1000)),
    [WEBHOOK_SIGNATURE_HEADER]: signatures.join(" "),
  };
}

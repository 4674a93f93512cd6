/**
 * REST-hook signing secrets (CONTRACT.md "Events and deliveries", Standard Webhooks): `whsec_` + base64 of random
 * bytes. The HMAC key is the decoded bytes, not the string, exactly as Standard Webhooks libraries read it.
 */
import crypto from "node:crypto";
import { WEBHOOK_SECRET_PREFIX } from "@stageline/shared";

/** Random bytes in a new secret (the contract allows 24 to 64). */
export const WEBHOOK_SECRET_BYTES = 32;

/**
 * A new signing secret: `whsec_` + base64 of 32 cryptographically random bytes (44 base64 characters, one `=`).
 * Matches `WEBHOOK_SECRET_PATTERN` of the contract.
 */
export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + crypto.randomBytes(WEBHOOK_SECRET_BYTES).toString("base64");
}

/**
 * The HMAC key of a secret: the base64-decoded bytes after `whsec_`.
 * @throws Error when `secret` does not start with `whsec_`.
 */
export function decodeWebhookSecret(secret: string): Buffer {
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) throw new Error(`a webhook secret starts with ${WEBHOOK_SECRET_PREFIX}`);
  return Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), "base64");
}

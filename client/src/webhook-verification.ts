/**
 * Verifies a REST hook delivery (CONTRACT "Events and deliveries", Standard Webhooks): the `webhook-signature`
 * header holds one or more space-separated `v1,<base64 HMAC-SHA256>` signatures of `<webhook-id>.<webhook-timestamp>.<raw
 * body>`, keyed with the base64-decoded part of the `whsec_` secret after the prefix. Several signatures appear
 * while the server rotates a secret; the receiver may also hold several secrets (old and new) during its own
 * rotation. Uses node:crypto only.
 */
import crypto from "node:crypto";
import type { WebhookEventName } from "./types";

/** A delivery whose signature, headers or timestamp do not check out. `reason` says which. */
export class WebhookVerificationError extends Error {
  constructor(
    message: string,
    /** `missing_header`, `invalid_timestamp`, `timestamp_too_old`, `timestamp_too_new`, `no_matching_signature` or `invalid_body`. */
    readonly reason: "missing_header" | "invalid_timestamp" | "timestamp_too_old" | "timestamp_too_new" | "no_matching_signature" | "invalid_body",
  ) {
    super(message);
    this.name = "WebhookVerificationError";
  }
}

/** A verified delivery. */
export interface VerifiedWebhook<T = unknown> {
  /** `webhook-id`: the event id, the same on every retry (dedupe on it). */
  id: string;
  /**
   * `x-webhook-event`, e.g. `item.created` or `item.deleted` (empty string when the header is absent). Not signed: see
   * verifyWebhook. Typed as the catalogue's names (WebhookEventName) for completion, but any string may arrive.
   */
  event: WebhookEventName | (string & {});
  /** `webhook-timestamp` as a Date (when the attempt was signed). */
  timestamp: Date;
  /** The parsed body: the item (item events) or task (task events). */
  data: T;
}

/** Options of {@link verifyWebhook}. */
export interface VerifyWebhookOptions {
  /** How far the timestamp may be from now, in the past or the future, in seconds (default 300). */
  toleranceSeconds?: number;
  /** The current time (default: now); for tests and replays. */
  now?: Date;
}

/** Headers as a fetch `Headers` object or a Node/Express record (`req.headers`). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

const SECRET_PREFIX = "whsec_";

/**
 * Verifies a delivery and returns it parsed. Synchronous.
 * @param rawBody the exact body bytes received (not re-serialised JSON: use `express.raw()` or `req.text()`).
 * @param headers the delivery's headers; names are matched case-insensitively.
 * @param secret the subscription's `whsec_...` secret, or several (any one verifying is enough) during a rotation.
 * @param options `toleranceSeconds` (default 300) applies both ways: older or newer timestamps are refused.
 * @returns `{ id, event, timestamp, data }`. Only `webhook-id`, `webhook-timestamp` and the body are signed: `event`
 * comes from the unsigned `x-webhook-event` header, so trust the event type in the body's data, not this field, when
 * it matters.
 * @throws TypeError when `secret` is empty or any secret is malformed (every secret is checked first, so the result
 * never depends on their order).
 * @throws WebhookVerificationError when a header is missing, the timestamp is malformed or out of tolerance, no
 * signature matches any secret, or the body is not JSON.
 */
export function verifyWebhook<T = unknown>(rawBody: string | Buffer | Uint8Array, headers: WebhookHeaders, secret: string | string[], options: VerifyWebhookOptions = {}): VerifiedWebhook<T> {
  const keys = (Array.isArray(secret) ? secret : [secret]).map(secretKey);
  if (keys.length === 0) throw new TypeError("verifyWebhook: at least one secret is required");
  const id = header(headers, "webhook-id");
  const timestampRaw = header(headers, "webhook-timestamp");
  const signatureHeader = header(headers, "webhook-signature");
  if (id === undefined || timestampRaw === undefined || signatureHeader === undefined) {
    throw new WebhookVerificationError("Missing webhook-id, webhook-timestamp or webhook-signature header", "missing_header");
  }
  if (!/^\d{1,15}$/.test(timestampRaw)) throw new WebhookVerificationError("Invalid webhook-timestamp header", "invalid_timestamp");
  const timestamp = Number(timestampRaw);
  const tolerance = options.toleranceSeconds ?? 300;
  const nowSeconds = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (timestamp < nowSeconds - tolerance) throw new WebhookVerificationError("Message timestamp too old", "timestamp_too_old");
  if (timestamp > nowSeconds + tolerance) throw new WebhookVerificationError("Message timestamp too new", "timestamp_too_new");

  const body = typeof rawBody === "string" ? Buffer.from(rawBody, "utf8") : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  const signed = Buffer.concat([Buffer.from(`${id}.${timestampRaw}.`, "utf8"), body]);
  const offered = signatureHeader
    .split(" ")
    .filter((part) => part.startsWith("v1,"))
    .map((part) => Buffer.from(part.slice(3), "base64"));
  const matched = keys.some((key) => {
    const expected = crypto.createHmac("sha256", key).update(signed).digest();
    return offered.some((sig) => sig.length === expected.length && crypto.timingSafeEqual(sig, expected));
  });
  if (!matched) throw new WebhookVerificationError("No matching signature found", "no_matching_signature");

  let data: T;
  try {
    data = JSON.parse(body.toString("utf8")) as T;
  } catch {
    throw new WebhookVerificationError("The body is not JSON", "invalid_body");
  }
  return { id, event: header(headers, "x-webhook-event") ?? "", timestamp: new Date(timestamp * 1000), data };
}

/**
 * The HMAC key of a `whsec_` secret: the base64-decoded part after the prefix (a bare base64 secret is accepted too).
 * @throws TypeError when the secret is not a string of that form (a programming or configuration error, not a bad
 * delivery: checked for every secret before any signature, so the outcome never depends on the secrets' order).
 */
function secretKey(secret: string): Buffer {
  const encoded = typeof secret !== "string" ? "" : secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) throw new TypeError("verifyWebhook: a secret is not a whsec_ base64 secret");
  return Buffer.from(encoded, "base64");
}

/** A header's value, case-insensitive; the first one when repeated; undefined when absent or empty. */
function header(headers: WebhookHeaders, name: string): string | undefined {
  let value: string | string[] | null | undefined;
  if (typeof (headers as Headers).get === "function") value = (headers as Headers).get(name);
  else {
    const record = headers as Record<string, string | string[] | undefined>;
    value = record[name];
    if (value === undefined) {
      const key = Object.keys(record).find((k) => k.toLowerCase() === name);
      value = key === undefined ? undefined : record[key];
    }
  }
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first === null || first === "" ? undefined : first;
}

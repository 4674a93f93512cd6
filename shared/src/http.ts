/**
 * Transport-level names shared by the server and the connector.
 * Spec "Authentication" and "Versioning"; CONTRACT "Scopes and limits" (RateLimit headers) and "Errors" (Retry-After).
 */

/** Spec "Versioning": every external path starts with this prefix. */
export const API_BASE_PATH = "/v1/ext";

/** Spec "Authentication": the API key travels in this request header on every request. */
export const API_KEY_HEADER = "x-api-key";

/** CONTRACT "Scopes and limits": IETF RateLimit header fields carried by every response. */
export const RATE_LIMIT_HEADERS = {
  limit: "RateLimit-Limit",
  remaining: "RateLimit-Remaining",
  reset: "RateLimit-Reset",
} as const;

/** CONTRACT "Errors": a 429 carries `Retry-After` (seconds). */
export const RETRY_AFTER_HEADER = "Retry-After";

/** CONTRACT "Lists": the next page URL travels in an RFC 8288 `Link: <...>; rel="next"` header. */
export const LINK_HEADER = "Link";

/** CONTRACT "Idempotency" (draft-ietf-httpapi-idempotency-key-header): the request header of a retry-safe create. */
export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";

/** CONTRACT "Idempotency": `true` on a response replayed from an earlier request with the same key. */
export const IDEMPOTENT_REPLAYED_HEADER = "Idempotent-Replayed";

/**
 * CONTRACT "Request ids and the request log": every response of `/v1/ext`, `/oauth` and `/console` names its request
 * in this header (an opaque id, `req_` and 22 base64url characters today); problem bodies repeat it as `request_id`.
 */
export const REQUEST_ID_HEADER = "Request-Id";

/** The longest request id a client shows (the server's are 26 characters). */
export const MAX_SHOWN_REQUEST_ID_LENGTH = 100;

/**
 * Type guard: can `value` be shown as a request id for a person to paste into the console's Requests search? A string
 * of 1..{@link MAX_SHOWN_REQUEST_ID_LENGTH} visible ASCII characters. A body or header from the network (a proxy, a
 * hostile server) is not trusted to be one: anything else is not shown.
 */
export function isRequestId(value: unknown): value is string {
  return typeof value === "string" && value.length <= MAX_SHOWN_REQUEST_ID_LENGTH && /^[\x21-\x7E]+$/.test(value);
}

/** CONTRACT "Idempotency": how long a key and its stored response are kept, in seconds (24 hours). */
export const IDEMPOTENCY_KEY_TTL_SECONDS = 24 * 60 * 60;

/** CONTRACT "Idempotency": a key is 1..255 printable ASCII characters (space to tilde). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7E]{1,255}$/;

/** Type guard: is `value` a valid `Idempotency-Key` value ({@link IDEMPOTENCY_KEY_PATTERN})? */
export function isIdempotencyKey(value: unknown): value is string {
  return typeof value === "string" && IDEMPOTENCY_KEY_PATTERN.test(value);
}

/**
 * CONTRACT "Responses": the `Location` of a created resource, e.g. `resourceLocation("items", id)` ->
 * `/v1/ext/items/{id}` (the id percent-encoded).
 */
export function resourceLocation(collection: "items" | "tasks" | "notes", id: string): string {
  return `${API_BASE_PATH}/${collection}/${encodeURIComponent(id)}`;
}

/** CONTRACT "HTTP semantics": the header listing the methods a path supports (RFC 9110 section 10.2.1). */
export const ALLOW_HEADER = "Allow";

/**
 * CONTRACT "Versioning and compatibility": the public changelog of the external API (docs/api/CHANGELOG.md); each
 * entry's anchor is its date (`#2026-11-24`). A deprecated operation's `Link: <...>; rel="deprecation"` points here.
 */
export const API_CHANGELOG_URL = "https://docs.stageline.dev/api/changelog";

/** CONTRACT "Versioning and compatibility": response headers of a deprecated operation (RFC 9745, RFC 8594). */
export const DEPRECATION_HEADERS = { deprecation: "Deprecation", sunset: "Sunset", link: "Link" } as const;

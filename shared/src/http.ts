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

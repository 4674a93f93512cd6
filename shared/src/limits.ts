/**
 * Numeric limits of the external API.
 * Spec "Limits" (60 requests per key per 60-second window) and CONTRACT "Scopes and limits" / "Errors" (413).
 */

/** Spec "Limits": 60 requests per API key per fixed 60-second window; over it the API answers 429. */
export const RATE_LIMIT = { limit: 60, windowSeconds: 60 } as const;

/** CONTRACT "Errors": a request body over 1 MiB is a 413 (`payload_too_large`). */
export const MAX_BODY_BYTES = 1024 * 1024;

/** CONTRACT "Scopes and limits": up to 1,000 webhook subscriptions per company. */
export const MAX_SUBSCRIPTIONS_PER_COMPANY = 1000;

/** CONTRACT "Scopes and limits": names and titles are 1..255 characters. Also the bound for identifiers. */
export const NAME_MAX = 255;

/** CONTRACT "Scopes and limits": description and notes are up to 10,000 characters. */
export const LONG_TEXT_MAX = 10000;

/** Upper bound for URLs (webhook target URLs, `url` custom field values). */
export const URL_MAX = 2048;

/** Largest value an integer column holds; integer inputs above it are rejected as a 400 rather than failing in the database. */
export const INT_MAX = 2147483647;

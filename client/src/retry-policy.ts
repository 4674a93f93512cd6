/**
 * Which attempts are repeated and how long to wait before the next one (CONTRACT "Client library"): network errors,
 * timeouts and 5xx are retried for reads and for requests that carry an `Idempotency-Key`, at most `maxRetries`
 * times, with exponential backoff and jitter; a keyed request also waits out `409 idempotency_key_in_use` (its own
 * earlier attempt still running on the server after a timeout). 429 is the rate-limit gate's business, not a retry.
 * Nothing else is retried.
 */

/** First backoff, in milliseconds. */
export const INITIAL_BACKOFF_MS = 500;
/** Longest backoff, in milliseconds. */
export const MAX_BACKOFF_MS = 8_000;

/**
 * Milliseconds to wait before retry number `retry` (0 for the first retry): `500 * 2^retry` capped at 8 s, times a
 * random factor in [0.5, 1) (jitter, so clients that failed together do not come back together), never under 500 ms;
 * at least `retryAfterMs` when the server said so.
 */
export function backoffMs(retry: number, retryAfterMs = 0, random: () => number = Math.random): number {
  const ceiling = Math.min(INITIAL_BACKOFF_MS * 2 ** retry, MAX_BACKOFF_MS);
  const jittered = Math.max(INITIAL_BACKOFF_MS, ceiling * (0.5 + random() / 2));
  return Math.max(jittered, retryAfterMs);
}

/** Whether an answer with this status (and problem `code`) is retried for a retry-safe request. */
export function isRetryableStatus(status: number, code: string | undefined): boolean {
  return status >= 500 || (status === 409 && code === "idempotency_key_in_use");
}

/**
 * Milliseconds the server asked to wait: `Retry-After` (seconds or an HTTP-date), else `RateLimit-Reset`
 * (seconds), else undefined. Negative values count as 0.
 */
export function serverWaitMs(headers: Headers, now: number): number | undefined {
  const retryAfter = headers.get("retry-after");
  if (retryAfter !== null && retryAfter.trim() !== "") {
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
    const date = Date.parse(retryAfter);
    if (Number.isFinite(date)) return Math.max(0, date - now);
  }
  const reset = Number(headers.get("ratelimit-reset") ?? NaN);
  if (headers.get("ratelimit-reset") !== null && Number.isFinite(reset)) return Math.max(0, reset * 1000);
  return undefined;
}

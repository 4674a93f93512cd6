/**
 * Which attempts are repeated and how long to wait before the next one (CONTRACT "Client library"): network errors,
 * timeouts and 5xx are retried for reads and for requests that carry an `Idempotency-Key`, at most `maxRetries`
 * times, with exponential backoff and jitter (at least the answer's `Retry-After`, capped at MAX_BACKOFF_MS; never
 * `RateLimit-Reset`); a keyed request also waits out `409 idempotency_key_in_use` (its own earlier attempt still
 * running on the server after a timeout). 429 is the rate-limit gate's business, not a retry.
 * Nothing else is retried.
 */

/** First backoff, in milliseconds. */
export const INITIAL_BACKOFF_MS = 500;
/** Longest backoff, in milliseconds. */
export const MAX_BACKOFF_MS = 8_000;

/**
 * Milliseconds to wait before retry number `retry` (0 for the first retry): "equal jitter" over `500 * 2^retry`
 * capped at 8 s, i.e. a random value in [step / 2, step) (0.25-0.5 s for the first retry, 4-8 s from the fifth on),
 * so clients that failed together do not come back together; at least `retryAfterMs` (the server's `Retry-After`,
 * already capped by the caller) when given.
 * @param random a source of numbers in [0, 1) (tests pin it).
 */
export function backoffMs(retry: number, retryAfterMs = 0, random: () => number = Math.random): number {
  const step = Math.min(INITIAL_BACKOFF_MS * 2 ** retry, MAX_BACKOFF_MS);
  return Math.max(step / 2 + (step / 2) * random(), retryAfterMs);
}

/** Whether an answer with this status (and problem `code`) is retried for a retry-safe request. */
export function isRetryableStatus(status: number, code: string | undefined): boolean {
  return status >= 500 || (status === 409 && code === "idempotency_key_in_use");
}

/**
 * Milliseconds `Retry-After` asks to wait (delta-seconds or an HTTP-date), or undefined when absent or unreadable.
 * Values in the past or negative count as 0. What a 5xx or `409 idempotency_key_in_use` may ask for: only this
 * header, never `RateLimit-Reset` (the server sends that on every answer; it is about the rate-limit window).
 * @param now the current time, ms since the epoch (for an HTTP-date).
 */
export function retryAfterMs(headers: Headers, now: number): number | undefined {
  const retryAfter = headers.get("retry-after");
  if (retryAfter === null || retryAfter.trim() === "") return undefined;
  const seconds = Number(retryAfter);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(retryAfter);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

/**
 * Milliseconds a `429` asks to wait: `Retry-After`, else `RateLimit-Reset` (seconds), else undefined; never below 0.
 * @param now the current time, ms since the epoch.
 */
export function rateLimitWaitMs(headers: Headers, now: number): number | undefined {
  const retryAfter = retryAfterMs(headers, now);
  if (retryAfter !== undefined) return retryAfter;
  const raw = headers.get("ratelimit-reset");
  const reset = Number(raw ?? NaN);
  return raw !== null && raw.trim() !== "" && Number.isFinite(reset) ? Math.max(0, reset * 1000) : undefined;
}

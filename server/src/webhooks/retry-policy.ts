/**
 * When to try a webhook delivery again (CONTRACT.md "Events and deliveries": retries on network errors, timeouts,
 * `429` and `5xx` with exponential backoff and jitter for up to 3 days; `410 Gone` deletes the subscription; other
 * `4xx` end the delivery as failed). Pure functions only: no clock, no randomness of their own, no I/O.
 */

/** Backoff parameters. Defaults: 1 s doubling per attempt, at most 1 h per step, for 3 days after creation. */
export interface RetryPolicy {
  /** Upper bound of the first retry delay (ms); the bound doubles with every further attempt. */
  baseMs: number;
  /** Cap of the bound of a single step (ms). Also the cap of a `Retry-After` the target asks for. */
  maxStepMs: number;
  /** How long after its creation a delivery is retried (ms); the last attempt happens at that deadline. */
  windowMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  baseMs: 1_000,
  maxStepMs: 60 * 60 * 1_000,
  windowMs: 3 * 24 * 60 * 60 * 1_000,
};

/** What one attempt's result means for its delivery. */
export type AttemptOutcome =
  /** 2xx: done. */
  | "succeeded"
  /** 410 Gone: the target asks to be unsubscribed (REST Hooks convention). */
  | "gone"
  /** No response (network error, timeout), 408, 429 or 5xx: try again later. */
  | "retry"
  /** Any other status (3xx, other 4xx): retrying cannot help. */
  | "failed";

/**
 * Classifies an HTTP status, or `null` when no response arrived (connection refused, reset, timeout).
 * Redirects are failures: deliveries never follow them.
 */
export function classifyResponse(status: number | null): AttemptOutcome {
  if (status === null) return "retry";
  if (status >= 200 && status < 300) return "succeeded";
  if (status === 410) return "gone";
  if (status === 408 || status === 429 || status >= 500) return "retry";
  return "failed";
}

/**
 * Exponential backoff with full jitter: a uniformly random delay in `[0, min(maxStepMs, baseMs * 2^(attempt-1)))`.
 * @param attempt how many attempts have failed so far (1 for the first retry).
 * @param random a source of numbers in [0, 1), e.g. `Math.random`.
 */
export function nextRetryDelayMs(attempt: number, random: () => number, policy: RetryPolicy = DEFAULT_RETRY_POLICY): number {
  const exponent = Math.min(Math.max(attempt, 1) - 1, 52);
  const bound = Math.min(policy.maxStepMs, policy.baseMs * 2 ** exponent);
  return Math.floor(random() * bound);
}

/**
 * Parses a `Retry-After` header (RFC 9110 §10.2.3): delay seconds or an HTTP-date.
 * @returns the delay in ms from `nowMs` (never negative), or null when absent or unparseable.
 */
export function parseRetryAfterMs(header: string | null | undefined, nowMs: number): number | null {
  if (header == null) return null;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1_000;
  if (!/[a-z]/i.test(value)) return null; // not a date either ("-1", "1.5")
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/** The plan for a delivery after a retryable failure. */
export type RetryDecision =
  | { state: "pending"; nextAttemptAt: Date }
  /** The retry window is over: the delivery ends as failed. */
  | { state: "failed"; nextAttemptAt: null };

/**
 * Decides the next attempt after a retryable failure. The delay is the target's `Retry-After` when given (kept
 * within `[baseMs, maxStepMs]`), else {@link nextRetryDelayMs}. Retries stop at `createdAt + windowMs`: a retry that
 * would fall later is moved to that deadline, so the final attempt happens when the window closes, and an attempt
 * that started at or after the deadline ends the delivery. An attempt that started before the deadline and failed
 * after it (a slow target) is followed by that final attempt at once.
 * @param input.attempt attempts made so far including the one that just failed (1-based).
 * @param input.attemptedAt when the failed attempt started (default `now`).
 * @param input.now when it finished: delays count from here.
 */
export function scheduleRetry(
  input: { attempt: number; createdAt: Date; attemptedAt?: Date; now: Date; retryAfterMs: number | null },
  random: () => number,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
): RetryDecision {
  const deadline = input.createdAt.getTime() + policy.windowMs;
  const now = input.now.getTime();
  if ((input.attemptedAt?.getTime() ?? now) >= deadline) return { state: "failed", nextAttemptAt: null };
  const delay =
    input.retryAfterMs !== null
      ? Math.min(policy.maxStepMs, Math.max(policy.baseMs, input.retryAfterMs))
      : nextRetryDelayMs(input.attempt, random, policy);
  return { state: "pending", nextAttemptAt: new Date(Math.min(now + delay, deadline)) };
}

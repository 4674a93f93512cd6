/**
 * Endpoint health, the policy that isolates endpoints from each other (CONTRACT.md "Events and deliveries":
 * isolation, endpoint health; docs/architecture.md "Webhook delivery scheduling").
 *
 * Every subscription is in one of two lanes, each with its own concurrency budget in the dispatcher:
 * - the **healthy lane**: endpoints whose last attempt succeeded (2xx) within `slowMs`. Their attempts are short,
 *   so a modest budget serves many of them, and nothing slow can enter it;
 * - the **probation lane**: everything else: endpoints never tried yet, failing (network error, timeout, 4xx, 5xx),
 *   or slow to answer. A dead or slow endpoint holds a probation slot for up to the attempt timeout; however many
 *   there are, in any company, they only queue behind each other.
 * One fast success moves an endpoint to the healthy lane; any failure or slow answer moves it to probation.
 *
 * A failing endpoint's queue works as a circuit breaker: while its head delivery fails, the queue is held (order is
 * kept) and only the head is probed, at the retry policy's backoff (webhooks/retry-policy.ts); the first success
 * closes it and the queue drains in order in the healthy lane.
 * Pure functions only.
 */
import type { AttemptOutcome } from "./retry-policy";

export interface EndpointHealthPolicy {
  /** An answer slower than this (ms) puts the endpoint in the probation lane even when it succeeded. */
  slowMs: number;
}

export const DEFAULT_ENDPOINT_HEALTH_POLICY: EndpointHealthPolicy = { slowMs: 2_000 };

/** What one attempt says about its endpoint. */
export interface EndpointHealth {
  /** The endpoint's lane from now on: true for the healthy lane. */
  healthy: boolean;
  /** The attempt failed: it starts or extends the endpoint's run of failures (`failing_since`). */
  failed: boolean;
}

/**
 * The endpoint's health after an attempt with `outcome` that took `durationMs`.
 * `gone` (410) deletes the subscription, so its health no longer matters; it counts as a failure here.
 */
export function healthAfterAttempt(outcome: AttemptOutcome, durationMs: number, policy: EndpointHealthPolicy = DEFAULT_ENDPOINT_HEALTH_POLICY): EndpointHealth {
  if (outcome === "succeeded") return { healthy: durationMs <= policy.slowMs, failed: false };
  return { healthy: false, failed: true };
}

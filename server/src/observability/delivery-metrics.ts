/**
 * What the webhook delivery engine reports to Prometheus (issue 17): attempts by outcome, the latency from an event
 * to its 2xx, how long a claim takes, and how many rows the retention purge removed. The engine calls the typed
 * recorder `DeliveryMetrics` (on `AppContext.metrics.delivery`); no label carries a company, subscription, URL or id.
 */
import { Counter, Histogram, type Registry } from "prom-client";
import type { AttemptOutcome as RetryAttemptOutcome } from "../webhooks/retry-policy";

/** The outcome of one delivery attempt (webhooks/retry-policy.ts `classifyResponse`). */
export type AttemptOutcome = RetryAttemptOutcome;

/** Every attempt outcome, so each series exists (at 0) before the first attempt. */
export const ATTEMPT_OUTCOMES = ["succeeded", "retry", "failed", "gone"] as const satisfies readonly AttemptOutcome[];

/** What the retention purge removes. */
export const PURGE_KINDS = ["deliveries", "attempts", "events"] as const;
/** One kind of purged row. */
export type PurgeKind = (typeof PURGE_KINDS)[number];

/**
 * The delivery engine's recorder. Every method is cheap, synchronous and never throws (a bad value is dropped), so
 * a call can sit on the delivery path without a try/catch.
 */
export interface DeliveryMetrics {
  /** One attempt finished with `outcome` (`stageline_webhook_attempts_total{outcome}`). */
  attempt(outcome: AttemptOutcome): void;
  /**
   * A delivery succeeded (2xx) `latencyMs` milliseconds after its event was created (`created_at` of the event to the
   * 2xx, retries included; `stageline_webhook_delivery_latency_seconds`). A negative value (clock skew) counts as 0.
   */
  delivered(latencyMs: number): void;
  /** One claim of due deliveries took `durationMs` milliseconds (`stageline_webhook_claim_duration_seconds`). */
  claim(durationMs: number): void;
  /** The retention purge deleted `n` rows of `kind` (`stageline_webhook_purged_rows_total{kind}`). */
  purged(kind: PurgeKind, n: number): void;
}

/**
 * Buckets of the event-to-2xx latency, in seconds: 50 ms up to the 3-day retry window (a delivery that is retried
 * succeeds minutes to days after its event).
 */
const DELIVERY_LATENCY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3_600, 21_600, 86_400, 259_200];

/** Buckets of one claim, in seconds: a claim is one statement, milliseconds unless the queue is large. */
const CLAIM_DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** Registers the delivery engine's counters and histograms on `registry` and returns their recorder. */
export function registerDeliveryMetrics(registry: Registry): DeliveryMetrics {
  const attempts = new Counter({
    name: "stageline_webhook_attempts_total",
    help: "Webhook delivery attempts, by outcome (succeeded: 2xx; retry: no response, 408, 429 or 5xx; failed: other status; gone: 410).",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });
  for (const outcome of ATTEMPT_OUTCOMES) attempts.inc({ outcome }, 0);
  const latency = new Histogram({
    name: "stageline_webhook_delivery_latency_seconds",
    help: "Time from an event's creation to its delivery's 2xx answer, retries included.",
    buckets: DELIVERY_LATENCY_BUCKETS,
    registers: [registry],
  });
  const claims = new Histogram({
    name: "stageline_webhook_claim_duration_seconds",
    help: "Duration of one claim of due webhook deliveries (the dispatcher's claim statement).",
    buckets: CLAIM_DURATION_BUCKETS,
    registers: [registry],
  });
  const purged = new Counter({
    name: "stageline_webhook_purged_rows_total",
    help: "Rows deleted by the webhook retention purge, by kind (deliveries, attempts, events).",
    labelNames: ["kind"] as const,
    registers: [registry],
  });
  for (const kind of PURGE_KINDS) purged.inc({ kind }, 0);

  const seconds = (ms: number) => Math.max(0, ms) / 1000;
  return {
    attempt: (outcome) => {
      if ((ATTEMPT_OUTCOMES as readonly string[]).includes(outcome)) attempts.inc({ outcome });
    },
    delivered: (latencyMs) => {
      if (Number.isFinite(latencyMs)) latency.observe(seconds(latencyMs));
    },
    claim: (durationMs) => {
      if (Number.isFinite(durationMs)) claims.observe(seconds(durationMs));
    },
    purged: (kind, n) => {
      if ((PURGE_KINDS as readonly string[]).includes(kind) && Number.isFinite(n) && n > 0) purged.inc({ kind }, n);
    },
  };
}

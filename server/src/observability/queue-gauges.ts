/**
 * The webhook queue's gauges, read from the database when Prometheus scrapes (issue 17): deliveries pending,
 * delivery lag, endpoints failing, and whether that reading worked. One statement per scrape
 * (db/webhook-stats.ts `readWebhookQueueStats`) feeds all of them; a failing or slow reading never fails the scrape.
 */
import { Gauge, type Registry } from "prom-client";
import type { Logger } from "pino";
import type { PrismaClient } from "../generated/prisma/client";
import { readWebhookQueueStats, type WebhookQueueStats } from "../db/webhook-stats";
import { within } from "./deadline";

/** A scrape waits at most this long for the queue reading (Prometheus' default scrape timeout is 10 s). */
export const QUEUE_STATS_TIMEOUT_MS = 3_000;

/**
 * Registers the queue gauges on `registry`. When a reading fails or takes longer than `timeoutMs`, the scrape
 * still answers: the three queue gauges keep their last values, `stageline_webhook_queue_stats_up` is 0, and the
 * error is logged at warn level.
 */
export function registerQueueGauges(
  registry: Registry,
  prisma: PrismaClient,
  logger: Logger,
  timeoutMs: number = QUEUE_STATS_TIMEOUT_MS,
): void {
  let inFlight: Promise<WebhookQueueStats | null> | null = null;
  // prom-client calls every metric's collect() in the same tick of a scrape: they share one reading.
  const reading = () =>
    (inFlight ??= within(readWebhookQueueStats(prisma), timeoutMs)
      .catch((err: unknown) => {
        logger.warn({ err }, "reading the webhook queue for metrics failed");
        return null;
      })
      .finally(() => {
        inFlight = null;
      }));

  const gauge = (name: string, help: string, pick: (s: WebhookQueueStats) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        const stats = await reading();
        if (stats) this.set(pick(stats));
      },
    });
  gauge("stageline_webhook_deliveries_pending", "Webhook deliveries waiting to be sent (state pending), across all companies.", (s) => s.pending);
  gauge(
    "stageline_webhook_delivery_lag_seconds",
    "How long the oldest due webhook delivery that can be sent (its subscription's queue head, subscription neither disabled nor paused) has been waiting; 0 when none is due.",
    (s) => s.lagSeconds,
  );
  gauge(
    "stageline_webhook_endpoints_failing",
    "Webhook subscriptions, not disabled, whose oldest pending delivery has failed at least once.",
    (s) => s.endpointsFailing,
  );
  new Gauge({
    name: "stageline_webhook_queue_stats_up",
    help: "1 when this scrape read the webhook queue gauges from the database, 0 when that failed or timed out (they then keep their last values).",
    registers: [registry],
    async collect() {
      this.set((await reading()) ? 1 : 0);
    },
  });
}

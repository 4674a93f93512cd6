/**
 * The metrics of one running server (issue 17): its own prom-client `Registry` (never prom-client's global one, so
 * several servers in one process, as in the tests, keep separate counts), holding
 * - `stageline_http_request_duration_seconds` (observability/http-metrics.ts),
 * - the delivery engine's counters and histograms (observability/delivery-metrics.ts),
 * - the webhook queue gauges read at scrape time (observability/queue-gauges.ts),
 * - prom-client's default process metrics (`process_*`, `nodejs_*`) when asked for.
 * docs/operations.md "Health checks and metrics" lists every metric. No label holds a company, key, URL or id.
 */
import { collectDefaultMetrics, Registry } from "prom-client";
import type { Logger } from "pino";
import type { PrismaClient } from "../generated/prisma/client";
import { registerDeliveryMetrics, type DeliveryMetrics } from "./delivery-metrics";
import { registerHttpMetrics, type HttpMetrics } from "./http-metrics";
import { registerQueueGauges } from "./queue-gauges";
import { registerRequestLogMetrics, type RequestLogMetrics } from "./request-log-metrics";

/** A server's metrics: the registry the metrics listener serves and the recorders the code calls. */
export interface AppMetrics {
  registry: Registry;
  /** Request timing of the main port (fed by http/request-metrics.ts). */
  http: HttpMetrics;
  /** The webhook delivery engine's recorder (dispatcher and retention purge). */
  delivery: DeliveryMetrics;
  /** The request log's recorder (entries written and dropped). */
  requestLog: RequestLogMetrics;
}

export interface MetricsOptions {
  prisma: PrismaClient;
  logger: Logger;
  /**
   * Also collect prom-client's default process metrics (CPU, memory, heap, event-loop lag, GC, handles). They start
   * an event-loop-delay monitor and a GC observer, so they are collected only when something will scrape them
   * (the metrics listener is on).
   */
  processMetrics: boolean;
}

/** Creates the registry of one server with every Stageline metric registered; counting starts at once. */
export function createMetrics(options: MetricsOptions): AppMetrics {
  const registry = new Registry();
  if (options.processMetrics) collectDefaultMetrics({ register: registry });
  const http = registerHttpMetrics(registry);
  const delivery = registerDeliveryMetrics(registry);
  const requestLog = registerRequestLogMetrics(registry);
  registerQueueGauges(registry, options.prisma, options.logger);
  return { registry, http, delivery, requestLog };
}

/**
 * What the request log reports to Prometheus (issue 40): entries written and entries dropped by reason
 * (`stageline_request_log_written_total`, `stageline_request_log_dropped_total{reason}`). No label carries a company,
 * route or id.
 */
import { Counter, type Registry } from "prom-client";

/** Why entries were dropped: a full company queue or buffer (fair-buffer.ts), or a batch the database refused. */
export const REQUEST_LOG_DROP_REASONS = ["company_full", "buffer_full", "database"] as const;
/** One drop reason. */
export type RequestLogDropReason = (typeof REQUEST_LOG_DROP_REASONS)[number];

/** The request log's recorder: cheap, synchronous, never throws. */
export interface RequestLogMetrics {
  written(n: number): void;
  dropped(reason: RequestLogDropReason, n: number): void;
}

/** Registers the request log's counters on `registry` (every reason at 0 from the start). */
export function registerRequestLogMetrics(registry: Registry): RequestLogMetrics {
  const written = new Counter({ name: "stageline_request_log_written_total", help: "Request log entries written to the database.", registers: [registry] });
  const dropped = new Counter({
    name: "stageline_request_log_dropped_total",
    help: "Request log entries dropped: a company's queue or the whole buffer full, or a batch the database refused (it was unreachable).",
    labelNames: ["reason"],
    registers: [registry],
  });
  for (const reason of REQUEST_LOG_DROP_REASONS) dropped.inc({ reason }, 0);
  return {
    written: (n) => written.inc(n),
    dropped: (reason, n) => dropped.inc({ reason }, n),
  };
}

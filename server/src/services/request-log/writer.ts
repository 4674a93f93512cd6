/**
 * The request log's writer (issue 40; CONTRACT "Request ids and the request log": "Writing it never blocks or fails a
 * request (bounded buffer, flushed in batches and at shutdown; what is dropped when the database is away is counted
 * in a metric); one company's volume never delays another's entries"). `record` only queues (fair-buffer.ts: per
 * company, bounded); a timer flushes batches of up to `batchSize` entries, one statement each, one flush at a time,
 * and `close` flushes what is left. A batch the database refuses is dropped and counted, never retried in a loop and
 * never allowed to fail the request that made it.
 */
import type { Logger } from "pino";
import { insertRequestLogEntries, type RequestLogEntry } from "../../db/request-log";
import type { SqlRunner } from "../../db/sql";
import type { RequestLogMetrics } from "../../observability/request-log-metrics";
import { FairBuffer, type FairBufferLimits } from "./fair-buffer";

/** The writer's settings. */
export interface RequestLogWriterOptions {
  /** Time between flushes, ms (default 250). */
  flushIntervalMs?: number;
  /** Entries per insert statement (default 500). */
  batchSize?: number;
  /** Buffer bounds (default 2,000 per company, 20,000 in all). */
  limits?: FairBufferLimits;
}

/** Appends entries to the request log without ever making a request wait. */
export interface RequestLogWriter {
  /** Queues `entry` (dropped and counted when its company's queue or the buffer is full). Never throws. */
  record(entry: RequestLogEntry): void;
  /** Writes everything queued now (tests, shutdown). Never throws. */
  flush(): Promise<void>;
  /** Stops the timer and flushes what is queued. */
  close(): Promise<void>;
}

/** Starts a writer over `sql`. */
export function startRequestLogWriter(sql: SqlRunner, metrics: RequestLogMetrics, logger: Logger, options: RequestLogWriterOptions = {}): RequestLogWriter {
  const batchSize = options.batchSize ?? 500;
  const buffer = new FairBuffer<RequestLogEntry>(options.limits ?? { perCompany: 2_000, total: 20_000 });
  let running: Promise<void> | null = null;
  let lastWarning = 0;

  async function drain(): Promise<void> {
    while (buffer.size > 0) {
      const batch = buffer.take(batchSize);
      try {
        await insertRequestLogEntries(sql, batch);
        metrics.written(batch.length);
      } catch (err) {
        metrics.dropped("database", batch.length);
        // One warning a minute at most: a database outage must not flood the log.
        if (Date.now() - lastWarning > 60_000) {
          lastWarning = Date.now();
          logger.warn({ err, dropped: batch.length }, "request log: a batch could not be written and was dropped");
        }
        return;
      }
    }
  }

  function flush(): Promise<void> {
    running ??= drain().finally(() => (running = null));
    return running;
  }

  const timer = setInterval(() => void flush(), options.flushIntervalMs ?? 250);
  timer.unref();

  return {
    record(entry) {
      const dropped = buffer.add(entry.companyId, entry);
      if (dropped) metrics.dropped(dropped, 1);
    },
    async flush() {
      // A flush already running may have taken its batches before the caller's entries arrived: run once more.
      await flush();
      await flush();
    },
    async close() {
      clearInterval(timer);
      await flush();
      await flush();
    },
  };
}

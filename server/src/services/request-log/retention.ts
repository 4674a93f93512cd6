/**
 * The request log's retention (CONTRACT "Request ids and the request log": `REQUEST_LOG_RETENTION_DAYS`, default
 * 14): a periodic job deleting entries older than the window, in batches of `REQUEST_LOG_PURGE_BATCH` oldest first
 * (one statement each, through the `at` index), so no statement holds locks for long however much piled up.
 */
import type { SqlRunner } from "../../db/sql";
import { purgeRequestLog } from "../../db/request-log";
import { startPeriodicJob, untilNone, type PeriodicJob } from "../periodic-job";

/** Entries per delete statement. */
export const REQUEST_LOG_PURGE_BATCH = 5_000;
/** Time between runs, ms (10 minutes). */
export const REQUEST_LOG_PURGE_INTERVAL_MS = 10 * 60_000;

/** The oldest time still kept with `retentionDays` at `now`. */
export function requestLogCutoff(now: Date, retentionDays: number): Date {
  return new Date(now.getTime() - retentionDays * 86_400_000);
}

/**
 * Deletes every entry older than `retentionDays` before `now`.
 * @returns how many were deleted.
 */
export function purgeOldRequests(sql: SqlRunner, retentionDays: number, now: Date = new Date()): Promise<number> {
  const cutoff = requestLogCutoff(now, retentionDays);
  return untilNone(() => purgeRequestLog(sql, cutoff, REQUEST_LOG_PURGE_BATCH));
}

/** Starts the job: one run now, then every `intervalMs`; a failed run goes to `onError` and is tried again later. */
export function startRequestLogRetention(
  sql: SqlRunner,
  retentionDays: number,
  onError: (err: unknown) => void,
  intervalMs: number = REQUEST_LOG_PURGE_INTERVAL_MS,
): PeriodicJob {
  return startPeriodicJob(() => purgeOldRequests(sql, retentionDays), onError, intervalMs);
}

/**
 * The background purge of expired OAuth records (codes, tokens, sessions, interactions past `expires_at`), started
 * and stopped with the server like the idempotency-key purge. Expired rows are invisible to every reader already
 * (docs/oauth-storage.md); this only keeps the table small. Batches of `PURGE_BATCH` rows, one statement each.
 */
import type { SqlRunner } from "../db/sql";
import { purgeExpiredOAuthRecords } from "../db/oauth-records";

/** Rows per delete statement. */
export const PURGE_BATCH = 500;
/** Time between runs, ms (10 minutes). */
export const PURGE_INTERVAL_MS = 10 * 60_000;

/** A started purge job. */
export interface OAuthPurge {
  /** Runs once more now (after a run in progress); resolves with the rows it deleted (0 after a failure). */
  runNow(): Promise<number>;
  /** Cancels the timer and waits for a run in progress. */
  stop(): Promise<void>;
}

/** Starts the purge: one run now, then every `intervalMs`; a failed run is reported to `onError` and retried later. */
export function startOAuthPurge(sql: SqlRunner, onError: (err: unknown) => void, intervalMs: number = PURGE_INTERVAL_MS): OAuthPurge {
  let running: Promise<number> = Promise.resolve(0);
  const runNow = () =>
    (running = running
      .then(async () => {
        let total = 0;
        for (let n = -1; n !== 0; total += n) n = await purgeExpiredOAuthRecords(sql, PURGE_BATCH);
        return total;
      })
      .catch((err: unknown) => {
        onError(err);
        return 0;
      }));
  void runNow();
  const timer = setInterval(() => void runNow(), intervalMs);
  timer.unref();
  return {
    runNow,
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}

/**
 * The background purge of OAuth records, started and stopped with the server like the idempotency-key purge:
 * - expired records (codes, tokens, sessions, interactions past `expires_at`): invisible to every reader already
 *   (docs/oauth-storage.md); deleting them only keeps the table small;
 * - clients from Dynamic Client Registration never used: no grant `UNUSED_CLIENT_MAX_AGE_SECONDS` after registering
 *   (db/oauth-records.ts `purgeUnusedRegisteredClients`), so registrations nobody completes do not pile up forever.
 * Batches of `PURGE_BATCH` rows, one statement each.
 */
import type { SqlRunner } from "../db/sql";
import { purgeExpiredOAuthRecords, purgeUnusedRegisteredClients } from "../db/oauth-records";

/** Rows per delete statement. */
export const PURGE_BATCH = 500;
/**
 * Age after which a client from Dynamic Client Registration with no grant is deleted: 7 days, seconds. An MCP client
 * registers just before sending its user to consent; a registration still unused a week later was abandoned (or
 * made by a flood). A client that comes back later simply registers again (RFC 7591 clients handle an unknown
 * client id that way). Console apps, CIMD naming records and clients with a grant are never deleted by this.
 */
export const UNUSED_CLIENT_MAX_AGE_SECONDS = 7 * 24 * 3600;
/** Time between runs, ms (10 minutes). */
export const PURGE_INTERVAL_MS = 10 * 60_000;

/** A started purge job. */
export interface OAuthPurge {
  /** Runs once more now (after a run in progress); resolves with the records it deleted (expired records and unused clients; 0 after a failure). */
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
        for (let n = -1; n !== 0; total += n) n = await purgeUnusedRegisteredClients(sql, UNUSED_CLIENT_MAX_AGE_SECONDS, PURGE_BATCH);
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

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
import { startPeriodicJob, untilNone, type PeriodicJob } from "../services/periodic-job";

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

/** A started purge job (services/periodic-job.ts). */
export type OAuthPurge = PeriodicJob;

/** Starts the purge: one run now, then every `intervalMs`; a failed run is reported to `onError` and retried later. */
export function startOAuthPurge(sql: SqlRunner, onError: (err: unknown) => void, intervalMs: number = PURGE_INTERVAL_MS): OAuthPurge {
  return startPeriodicJob(
    async () =>
      (await untilNone(() => purgeExpiredOAuthRecords(sql, PURGE_BATCH))) +
      (await untilNone(() => purgeUnusedRegisteredClients(sql, UNUSED_CLIENT_MAX_AGE_SECONDS, PURGE_BATCH))),
    onError,
    intervalMs,
  );
}

/**
 * How long the webhook delivery log is kept (CONTRACT.md "Events and deliveries", Retention; issue 17):
 *
 * - A delivery that has ended (`succeeded` or `failed`) is deleted, with all its attempts, once its `completed_at`
 *   is older than the retention period (`WEBHOOK_RETENTION_DAYS`, default 30 days, like Stripe's event log).
 * - An event is deleted once it is older than the retention period and no delivery of it is left. An event with a
 *   pending delivery is therefore never deleted, nor is one whose deliveries ended recently.
 * - A pending delivery is never deleted, however old: it is still queued (a paused endpoint's deliveries wait for
 *   it to resume; redelivering puts an ended delivery back to pending, which saves it).
 * - Redelivering a deleted delivery is `404 not_found`, like any unknown delivery.
 *
 * The deletion runs in the background, in every server process, now and then every `intervalMs`; each batch of at
 * most `batchSize` rows is one short statement of its own, deleting by primary key and skipping rows another
 * process holds (`FOR UPDATE SKIP LOCKED`), so it never holds locks the dispatcher's claim or the API's writes wait
 * on for long. Pure values and functions only: no clock, no I/O.
 */

/** The retention policy of the webhook delivery log. */
export interface WebhookRetentionPolicy {
  /** Ended deliveries and events are kept this many whole days (WEBHOOK_RETENTION_DAYS, positive). */
  retentionDays: number;
  /** Rows of one kind (deliveries; events examined) deleted by one statement at most. */
  batchSize: number;
  /** How often a run starts (ms); a run deletes batch after batch until nothing old is left. */
  intervalMs: number;
}

/** One day in milliseconds. */
const DAY_MS = 24 * 60 * 60 * 1000;

/** Rows one statement deletes at most: small enough to run in milliseconds and hold its row locks as briefly. */
export const RETENTION_BATCH_SIZE = 500;

/** A run every 10 minutes (like the idempotency-key purge); rows are deleted within that long of expiring. */
export const RETENTION_INTERVAL_MS = 10 * 60 * 1000;

/** The policy for `retentionDays` days with the standard batch size and interval. */
export function webhookRetentionPolicy(retentionDays: number): WebhookRetentionPolicy {
  return { retentionDays, batchSize: RETENTION_BATCH_SIZE, intervalMs: RETENTION_INTERVAL_MS };
}

/**
 * The cutoff at `now`: deliveries that ended before it and events created before it are old enough to delete.
 * @returns `now` minus `retentionDays` whole days (24 h each, so it does not move with daylight saving time).
 */
export function retentionCutoff(now: Date, policy: Pick<WebhookRetentionPolicy, "retentionDays">): Date {
  return new Date(now.getTime() - policy.retentionDays * DAY_MS);
}


/**
 * The webhook queue's state as operators watch it (issue 17, metrics): how many deliveries wait, how far the oldest
 * due one is behind, and how many endpoints are failing. Read at scrape time by the metrics registry
 * (observability/metrics.ts); nothing here is per company.
 */
import type { PrismaClient } from "../generated/prisma/client";
import { queryOne } from "./sql";
import { laneQueues } from "./webhook-dispatch";

/**
 * The pending count stops at this many: counting is O(pending), so an exact count of a 1,000,000-row backlog would
 * cost every scrape 40-100 ms of database time; capped, the whole reading costs about 30 ms (measured, see below).
 */
export const PENDING_COUNT_CAP = 100_000;

/** One reading of the webhook queue (all values across every company). */
export interface WebhookQueueStats {
  /**
   * Deliveries in state `pending` (due now, waiting for a retry, or queued behind their subscription's head), counted
   * up to `PENDING_COUNT_CAP`: that value means "this many or more".
   */
  pending: number;
  /**
   * Delivery lag in seconds: how long the longest-waiting queue has been due and not yet claimed, i.e. `now() -
   * next_due_at` of the oldest due queue (subscription neither disabled nor paused; db/webhook-dispatch.ts); 0 when
   * none is due. Queues, not deliveries: a delivery behind a head that waits for its retry cannot be sent yet, so
   * it is not lag; a head retried on time is not lag either until its time has passed.
   */
  lagSeconds: number;
  /** Subscriptions, not disabled, whose current run of failed attempts has begun (`failing_since` set). */
  endpointsFailing: number;
}

/**
 * Reads `WebhookQueueStats` in one statement.
 *
 * Cost: the pending count is an index-only scan of `webhook_deliveries_state_next_attempt_at_idx` that stops at
 * `PENDING_COUNT_CAP` rows (17-25 ms at the cap on PostgreSQL 15, where an uncapped count of 1,000,000 took
 * 42-73 ms); the lag reads the first entry of each lane's due-queue index (db/webhook-dispatch.ts); failing
 * endpoints count subscriptions (O(subscriptions), never O(pending)).
 * @param pendingCap where the pending count stops (default `PENDING_COUNT_CAP`).
 * @throws the driver's error when the database is unreachable.
 */
export async function readWebhookQueueStats(prisma: PrismaClient, pendingCap: number = PENDING_COUNT_CAP): Promise<WebhookQueueStats> {
  const row = await queryOne<{ pending: number; lag_seconds: number; endpoints_failing: number }>(
    prisma,
    `SELECT
       (SELECT count(*)::int FROM (SELECT 1 FROM webhook_deliveries WHERE state = 'pending' LIMIT $1::int) p) AS pending,
       coalesce(extract(epoch FROM now() - least(
         (SELECT min(next_due_at) FROM webhook_subscriptions WHERE ${laneQueues(true)}),
         (SELECT min(next_due_at) FROM webhook_subscriptions WHERE ${laneQueues(false)}))), 0)::float8
         AS lag_seconds,
       (SELECT count(*)::int FROM webhook_subscriptions WHERE failing_since IS NOT NULL AND disabled_at IS NULL)
         AS endpoints_failing`,
    [pendingCap],
  );
  return {
    pending: Number(row?.pending ?? 0),
    lagSeconds: Math.max(0, Number(row?.lag_seconds ?? 0)),
    endpointsFailing: Number(row?.endpoints_failing ?? 0),
  };
}

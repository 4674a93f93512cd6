/**
 * Deliveries per hour for the console's charts (issue 40 item 6, CONTRACT "Console: events, activity and charts"):
 * read from the delivery log itself (`webhook_deliveries`), never from a second copy. One statement per chart: an
 * hour series (`generate_series`) with, per hour, one index-only range scan of
 * `webhook_deliveries_subscription_id_created_at_id_idx` (key subscription and created_at, carrying state and the last
 * attempt's duration; migration 20261207000000_delivery_chart_index), so no heap page and no per-row date function.
 * The statement runs with JIT off (`SET LOCAL jit = off` in a short transaction): the planner estimates 1,000 rows
 * for a `generate_series` of timestamps and so a cost over PostgreSQL's default `jit_inline_above_cost`, and on the
 * bench's 1,000,000 deliveries JIT compilation alone took 1,068 ms of a 7-day chart's 4.7 s (EXPLAIN ANALYZE, load 27).
 * Measured: bench phase `console` (bench/README.md item 7), docs/charts.md.
 */
import { sqlOf, type Executor, type TransactionQuery } from "./sql";

/** One hour of deliveries: those created in `[hour, hour + 1 h)`, counted by their state now. */
export interface DeliveryHourRow {
  /** Start of the hour (UTC). */
  hour: Date;
  /** Deliveries in state `succeeded`. */
  delivered: number;
  /** Deliveries in state `failed` (every attempt spent, or given up). */
  failed: number;
  /** Deliveries in state `pending` (queued, in flight or waiting for a retry). */
  pending: number;
  /**
   * Median and 95th percentile (nearest rank, `percentile_disc`) in ms of the duration of each delivery's latest
   * attempt (`last_duration_ms`: request sent to response read, or to the error), over the hour's deliveries that
   * have had an attempt; null when none has.
   */
  p50Ms: number | null;
  p95Ms: number | null;
}

/** Whose deliveries: one endpoint (subscription) of a company, or every endpoint of the company. */
export type DeliveryChartScope = { companyId: string; subscriptionId: string } | { companyId: string; subscriptionId?: undefined };

/** Hours one statement may cover at most (31 days): bounds the work of a call whatever the caller passes. */
export const MAX_CHART_HOURS = 24 * 31;

const HOUR_MS = 3_600_000;

/**
 * Deliveries per hour of `scope` for `hours` consecutive UTC hours, the last one starting at `lastHour` (a whole UTC
 * hour), oldest first: exactly `hours` rows, hours without deliveries as zeros. Hours are computed here in UTC and
 * passed as instants, so the session's TimeZone never moves a bucket. The company is checked in the statement itself
 * (a subscription of another company reads as zeros).
 * @throws RangeError when `hours` is not an integer in 1..MAX_CHART_HOURS or `lastHour` is not a whole UTC hour;
 *   the driver's error when the database is unreachable.
 */
export async function deliveriesPerHour(db: Executor, scope: DeliveryChartScope, lastHour: Date, hours: number): Promise<DeliveryHourRow[]> {
  if (!Number.isInteger(hours) || hours < 1 || hours > MAX_CHART_HOURS) throw new RangeError(`hours must be an integer in 1..${MAX_CHART_HOURS}`);
  if (lastHour.getTime() % HOUR_MS !== 0) throw new RangeError("lastHour must start a UTC hour");
  const first = new Date(lastHour.getTime() - (hours - 1) * HOUR_MS);
  const oneEndpoint = scope.subscriptionId !== undefined;
  type Row = { hour: Date; delivered: number; failed: number; pending: number; p50: number | null; p95: number | null };
  const withoutJit = async (q: TransactionQuery) => {
    await q("SET LOCAL jit = off");
    return q<Row>(text, params);
  };
  const text = `SELECT h.hour, c.delivered, c.failed, c.pending, c.p50, c.p95
       FROM generate_series($2::timestamptz, $3::timestamptz, interval '1 hour') AS h(hour)
       CROSS JOIN LATERAL (
         SELECT count(*) FILTER (WHERE d.state = 'succeeded')::int AS delivered,
                count(*) FILTER (WHERE d.state = 'failed')::int AS failed,
                count(*) FILTER (WHERE d.state = 'pending')::int AS pending,
                percentile_disc(0.5) WITHIN GROUP (ORDER BY d.last_duration_ms) AS p50,
                percentile_disc(0.95) WITHIN GROUP (ORDER BY d.last_duration_ms) AS p95
           FROM webhook_subscriptions s
           JOIN webhook_deliveries d ON d.subscription_id = s.id
          WHERE s.company_id = $1 ${oneEndpoint ? "AND s.id = $4" : ""}
            AND d.created_at >= h.hour AND d.created_at < h.hour + interval '1 hour'
       ) c
      ORDER BY h.hour`;
  const params = oneEndpoint ? [scope.companyId, first, lastHour, scope.subscriptionId] : [scope.companyId, first, lastHour];
  const rows = typeof db === "function" ? await withoutJit(db) : await sqlOf(db).transaction(withoutJit);
  return rows.map((r) => ({
    hour: r.hour,
    delivered: Number(r.delivered),
    failed: Number(r.failed),
    pending: Number(r.pending),
    p50Ms: r.p50 === null ? null : Number(r.p50),
    p95Ms: r.p95 === null ? null : Number(r.p95),
  }));
}

/**
 * Data access for the events feed (CONTRACT "Events feed (catch up without a public URL)"): a company's retained
 * `webhook_events` in `seq` order, which is commit order within a company (db/outbox.ts `eventOrderLockCte`).
 *
 * Cost (issue 31, "a feed page with 1M events within 1.3x of the same at 10k"): every read is a range scan of the
 * index `webhook_events (company_id, seq)`, or `(company_id, resource_id, seq)` with `resource_id`, from the
 * cursor's position, of at most `scan` rows (`FEED_SCAN_ROWS`), which stops as soon as the page is full. The name
 * and pipeline filters are applied to those rows only, so a filter that matches little never walks the company's
 * whole history in one request: the page may then come back short (even empty), and the caller continues from the
 * last row examined. Measured on PostgreSQL (a loaded 2-core machine): a newest-first or `after` page of 100 in
 * 5-10 ms with 10k and with 1M events in the company; a filter matching nothing, 25 ms (the whole 5,000-row bound).
 */
import type { PrismaClient } from "../generated/prisma/client";
import { eventPipelineSql } from "./outbox";
import { query } from "./sql";

/** Rows one feed read examines at most (the bound on its scan). */
export const FEED_SCAN_ROWS = 5000;

/** One stored event, as the feed shows it. */
export interface FeedEventRow {
  id: string;
  seq: bigint;
  type: string;
  resourceId: string;
  /** The JSON body as stored (the delivery body, or the erased body). */
  payload: unknown;
  createdAt: Date;
  /** When the body was erased (its item or note was deleted), or null. */
  erasedAt: Date | null;
}

/** What one feed read found. */
export interface FeedScan {
  /** The matching events, in the read's order, at most `limit`. */
  rows: FeedEventRow[];
  /** More matching events may follow the last one in `rows`. */
  more: boolean;
  /**
   * Where the next read starts when `more` and `rows` did not reach `limit` (the scan bound was reached first): the
   * last event examined, matching or not. Null otherwise.
   */
  lastExamined: { id: string; seq: bigint } | null;
}

/** A feed read: direction, starting position and filters (combined with AND). */
export interface FeedRead {
  /** `desc`: newest first, rows with seq below `from`; `asc`: oldest first, rows with seq above `from`. */
  direction: "asc" | "desc";
  /** Exclusive starting seq; null: from the newest (desc) or the oldest (asc) event. */
  from: bigint | null;
  /** Event names to return (the key's readable names, narrowed by the `event` filter); never empty. */
  types: readonly string[];
  resourceId: string | null;
  pipelineId: string | null;
  /** Page size (1..500). */
  limit: number;
  /** Rows examined at most (default FEED_SCAN_ROWS; at least `limit + 1`). */
  scan?: number;
  /**
   * Exclusive seq at the far end of the range (`desc`: rows with seq above it; `asc`: below it); null or absent:
   * none. Bounds the scan itself (an index condition), so a read stops there (the console's time range, from
   * {@link seqWindow}).
   */
  to?: bigint | null;
  /** Only events that occurred (`created_at`) at or after this time; checked on each examined row. */
  occurredFrom?: Date | null;
  /** Only events that occurred before this time; checked on each examined row. */
  occurredBefore?: Date | null;
}

/** Selected columns of a feed row (by id). */
const COLUMNS = `e.id, e.seq::text AS seq, e.type, e.resource_id, e.payload, e.created_at, e.erased_at`;

/** A row of `COLUMNS` as the driver returns it. */
interface StoredRow {
  id: string;
  seq: string;
  type: string;
  resource_id: string;
  payload: unknown;
  created_at: Date;
  erased_at: Date | null;
}

/** A `COLUMNS` row as a FeedEventRow. */
function toFeedRow(r: StoredRow): FeedEventRow {
  return {
    id: r.id,
    seq: BigInt(r.seq),
    type: r.type,
    resourceId: r.resource_id,
    payload: r.payload,
    createdAt: new Date(r.created_at),
    erasedAt: r.erased_at === null ? null : new Date(r.erased_at),
  };
}

/**
 * The range a read examines, as SQL conditions on `webhook_events e` (the resource condition spliced by variant):
 * from `$2` (exclusive, null: the start) to the parameter `to` (exclusive, null: the end), both index conditions.
 */
function rangeSql(direction: "asc" | "desc", byResource: boolean, to: string): { where: string; order: string } {
  const [cmp, back, order, start, end] =
    direction === "asc" ? [">", "<", "ASC", "0", "9223372036854775807"] : ["<", ">", "DESC", "9223372036854775807", "0"];
  return {
    where:
      `e.company_id = $1 AND ${byResource ? "e.resource_id = $3::text" : "$3::text IS NULL"} AND e.seq ${cmp} COALESCE($2::bigint, ${start})` +
      ` AND e.seq ${back} COALESCE(${to}::bigint, ${end})`,
    order,
  };
}

/**
 * The page statement of each direction, with or without the `resource_id` condition (`$3`): only the comparison, the
 * order and that condition differ, all spliced from constants, so each variant's plan is a plain index range scan
 * (`(company_id, seq)`, or `(company_id, resource_id, seq)` with a resource) under a LIMIT of `$6` rows, filtered,
 * under a LIMIT of `$7 + 1`: the scan stops as soon as the page is full, and never reads more than `$6` rows.
 */
function pageSql(direction: "asc" | "desc", byResource: boolean): string {
  const { where, order } = rangeSql(direction, byResource, "$8");
  return `SELECT s.id, s.seq::text AS seq, s.type, s.resource_id, s.payload, s.created_at, s.erased_at
     FROM (
       SELECT e.id, e.seq, e.type, e.resource_id, e.payload, e.created_at, e.erased_at FROM webhook_events e
       WHERE ${where}
       ORDER BY e.seq ${order}
       LIMIT $6::int
     ) s
     WHERE s.type = ANY ($4::text[]) AND ($5::text IS NULL OR ${eventPipelineSql("s", "$1")} = $5::text)
       AND ($9::timestamptz IS NULL OR s.created_at >= $9::timestamptz) AND ($10::timestamptz IS NULL OR s.created_at < $10::timestamptz)
     ORDER BY s.seq ${order}
     LIMIT $7::int + 1`;
}

/** The last row of the read's range when the range holds `$4` rows or more (the row that bounds the scan). */
function boundSql(direction: "asc" | "desc", byResource: boolean): string {
  const { where, order } = rangeSql(direction, byResource, "$5");
  return `SELECT e.id, e.seq::text AS seq FROM webhook_events e
     WHERE ${where}
     ORDER BY e.seq ${order}
     OFFSET $4::int - 1 LIMIT 1`;
}

/**
 * Reads one page of company `companyId`'s events (see the module comment for the cost bound): one statement for
 * the page, and, only when the page is not full, a second that finds whether the scan bound cut it short.
 * @returns the matching rows in the read's order and whether more may follow (`more`; continue after the last row,
 * or after `lastExamined` when the scan bound cut the page short).
 */
export async function readFeed(prisma: PrismaClient, companyId: string, read: FeedRead): Promise<FeedScan> {
  const scan = Math.max(read.scan ?? FEED_SCAN_ROWS, read.limit + 1);
  const byResource = read.resourceId !== null;
  const from = read.from === null ? null : read.from.toString();
  const to = read.to === undefined || read.to === null ? null : read.to.toString();
  const rows = await query<StoredRow>(prisma, pageSql(read.direction, byResource), [
    companyId,
    from,
    read.resourceId,
    [...read.types],
    read.pipelineId,
    scan,
    read.limit,
    to,
    read.occurredFrom ?? null,
    read.occurredBefore ?? null,
  ]);
  const matched = rows.map(toFeedRow);
  if (matched.length > read.limit) return { rows: matched.slice(0, read.limit), more: true, lastExamined: null };
  // Not full: either the range ended, or the scan reached its bound (then events may remain past its last row).
  const bound = await query<{ id: string; seq: string }>(prisma, boundSql(read.direction, byResource), [companyId, from, read.resourceId, scan, to]);
  const last = bound[0];
  return { rows: matched, more: last !== undefined, lastExamined: last ? { id: last.id, seq: BigInt(last.seq) } : null };
}

/** The seq of company `companyId`'s event `eventId`, or null when it is not (or no longer) stored. */
export async function eventSeq(prisma: PrismaClient, companyId: string, eventId: string): Promise<bigint | null> {
  const rows = await query<{ seq: string }>(prisma, `SELECT seq::text AS seq FROM webhook_events WHERE id = $1 AND company_id = $2`, [eventId, companyId]);
  return rows[0] ? BigInt(rows[0].seq) : null;
}

/** Company `companyId`'s event `eventId`, or null when it is not (or no longer) stored. */
export async function findFeedEvent(prisma: PrismaClient, companyId: string, eventId: string): Promise<FeedEventRow | null> {
  const rows = await query<StoredRow>(
    prisma,
    `SELECT ${COLUMNS} FROM webhook_events e WHERE e.id = $1 AND e.company_id = $2`,
    [eventId, companyId],
  );
  return rows[0] ? toFeedRow(rows[0]) : null;
}

/**
 * The seq range that holds every event of company `companyId` that occurred (`created_at`) in [`since`, `until`),
 * for a newest-first read of a time range (the console's Events page): `from` and `to` as {@link FeedRead} takes
 * them (both exclusive, null: unbounded), found with the index `webhook_events (company_id, created_at)` (one
 * index probe each). The range may hold a few events outside the time range at its ends, so the read still checks
 * each row's time (`occurredFrom`, `occurredBefore`).
 *
 * Why `slackMs`: seq is commit order, while `created_at` is the start of the writing transaction, so the two orders
 * can differ by the length of a transaction. An event that occurred at or after `until + slackMs` bounds the range
 * from above: every event committed after it started its transaction less than `slackMs` before its own insert,
 * which came after that event's, so it occurred at or after `until`. Likewise an event that occurred before
 * `since - slackMs` bounds it from below. This holds for transactions shorter than `slackMs`.
 * @returns `from`: the seq above which no event of the range lies (null: none bounds it); `to`: the seq below which
 *   none lies (null: none bounds it).
 */
export async function seqWindow(
  prisma: PrismaClient,
  companyId: string,
  range: { since: Date | null; until: Date | null },
  slackMs: number,
): Promise<{ from: bigint | null; to: bigint | null }> {
  // The time as a row comparison with the company, ordered as the index is: only (company_id, created_at) can serve
  // it, so the planner never walks the (created_at, id) index through other companies' events (which it did when
  // it estimated the company had nothing after the time; console-events-db.test.ts).
  const seqAt = async (sql: string, at: Date) => {
    const rows = await query<{ seq: string }>(prisma, sql, [companyId, at]);
    return rows[0] ? BigInt(rows[0].seq) : null;
  };
  const from = range.until
    ? await seqAt(
        SEQ_WINDOW_SQL.from,
        new Date(range.until.getTime() + slackMs),
      )
    : null;
  const to = range.since
    ? await seqAt(
        SEQ_WINDOW_SQL.to,
        new Date(range.since.getTime() - slackMs),
      )
    : null;
  return { from, to };
}

/** The statements of {@link seqWindow} (`$1` company id, `$2` the time), exported for the plan checks of the tests. */
export const SEQ_WINDOW_SQL = {
  from: `SELECT seq::text AS seq FROM webhook_events
     WHERE company_id = $1 AND (company_id, created_at) >= ($1, $2::timestamptz) ORDER BY company_id, created_at LIMIT 1`,
  to: `SELECT seq::text AS seq FROM webhook_events
     WHERE company_id = $1 AND (company_id, created_at) < ($1, $2::timestamptz) ORDER BY company_id DESC, created_at DESC LIMIT 1`,
} as const;

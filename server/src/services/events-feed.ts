/**
 * The events feed (CONTRACT "Events feed (catch up without a public URL)", "Lists", "Errors"): what a key may read,
 * in which order, from where, and the response shape. Data access is db/events-feed.ts.
 *
 * Scopes: a key reads the events of the names its scopes cover (shared `eventReadScope`: `tasks:read` for task
 * events, `items:read` for item and note events). The route admits keys with either scope; a key with neither is
 * `403 insufficient_scope` naming both (CONTRACT "Errors": a missing scope is a 403, and the feed has no event such a
 * key could read). An event of a name the key cannot read is `404` by id, as another company's.
 *
 * Order: newest first by `seq` (commit order within the company) with an opaque `cursor`; with `after=<event_id>`,
 * the events committed after that one, oldest first, continued by `after=<the last event_id>`. An `after` id that is
 * not a retained event of the company (purged by retention, or never its) is `410 cursor_expired`.
 */
import { readableEventNames, type EventListQuery, type FeedEvent } from "@stageline/shared";
import type { AppContext } from "../context";
import { eventSeq, findFeedEvent, readFeed, type FeedEventRow } from "../db/events-feed";
import { DomainError, domainError, notFound } from "./errors";

/** Where the next page starts: the query parameters to set on the request's own URL. */
export type FeedNext = { after: string } | { cursor: string } | null;

/** One page of the feed and where the next one starts (null: none follows). */
export interface FeedPage {
  events: FeedEvent[];
  next: FeedNext;
}

/**
 * The cursor of the newest-first order: base64url of `["seq", "<decimal seq>"]` (opaque to clients). The console's
 * Events page pages with it too (services/console-events.ts).
 */
export function encodeSeqCursor(seq: bigint): string {
  return Buffer.from(JSON.stringify(["seq", seq.toString()])).toString("base64url");
}

/**
 * Decodes `encodeSeqCursor`'s output.
 * @returns the seq the next newest-first page starts below.
 * @throws DomainError 400 `validation_failed` (path `cursor`) for anything the server did not issue.
 */
export function decodeSeqCursor(cursor: string): bigint {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (!Array.isArray(value) || value.length !== 2 || value[0] !== "seq" || typeof value[1] !== "string") throw new Error("shape");
    if (!/^[1-9]\d{0,18}$/.test(value[1])) throw new Error("seq");
    const seq = BigInt(value[1]);
    if (seq > 9223372036854775807n) throw new Error("range");
    return seq;
  } catch {
    throw new DomainError("validation_failed", "The cursor is not valid. Use the URL from the Link header as given.", {
      errors: [{ path: "cursor", message: "not a cursor returned by this API" }],
    });
  }
}

/** A stored event in the feed's shape: `data` is the stored delivery body (or erased body) unchanged. */
export function toFeedEvent(row: FeedEventRow): FeedEvent {
  return {
    event_id: row.id,
    event: row.type as FeedEvent["event"],
    occurred_at: row.createdAt.toISOString(),
    resource_id: row.resourceId,
    data: row.payload as Record<string, unknown>,
  };
}

/**
 * One page of company `companyId`'s feed as a key with `scopes` sees it (GET /v1/ext/events).
 * @returns the events (at most `query.limit`) and where the next page starts, when more may follow. A page can be
 *   short, even empty, while `next` is set: a read examines a bounded number of events (db/events-feed.ts).
 * @throws DomainError 400 `validation_failed` for a bad cursor or `after` together with `cursor`;
 *   410 `cursor_expired` for an `after` that is not a retained event of the company.
 */
export async function listEvents(ctx: AppContext, companyId: string, scopes: readonly string[], query: EventListQuery): Promise<FeedPage> {
  if (query.after !== undefined && query.cursor !== undefined) {
    throw domainError("validation_failed", "after and cursor cannot be combined: follow the Link header's next URL.", {
      errors: [{ path: "cursor", message: "not allowed together with after" }],
    });
  }
  const readable = readableEventNames(scopes);
  const types = query.event ? readable.filter((name) => query.event!.includes(name)) : readable;
  let from: bigint | null = null;
  if (query.after !== undefined) {
    from = await eventSeq(ctx.prisma, companyId, query.after);
    if (from === null) {
      throw domainError(
        "cursor_expired",
        `Event ${query.after} is not retained (events are kept ${ctx.config.webhookRetentionDays} days): events may have been missed. Resynchronize, then follow the feed from a recent event.`,
      );
    }
  } else if (query.cursor !== undefined) {
    from = decodeSeqCursor(query.cursor);
  }
  if (types.length === 0) return { events: [], next: null }; // the `event` filter names only events the key cannot read
  const direction = query.after !== undefined ? "asc" : "desc";
  const scan = await readFeed(ctx.prisma, companyId, {
    direction,
    from,
    types,
    resourceId: query.resource_id ?? null,
    pipelineId: query.pipeline_id ?? null,
    limit: query.limit,
  });
  const events = scan.rows.map(toFeedEvent);
  if (!scan.more) return { events, next: null };
  const last = scan.lastExamined ?? scan.rows[scan.rows.length - 1]!;
  return { events, next: direction === "asc" ? { after: last.id } : { cursor: encodeSeqCursor(last.seq) } };
}

/**
 * Company `companyId`'s event `eventId` as a key with `scopes` sees it (GET /v1/ext/events/{event_id}).
 * @throws DomainError 404 `not_found` when it is not a retained event of the company, or one of a name the key's
 *   scopes cannot read.
 */
export async function getEvent(ctx: AppContext, companyId: string, scopes: readonly string[], eventId: string): Promise<FeedEvent> {
  const row = await findFeedEvent(ctx.prisma, companyId, eventId);
  if (!row || !(readableEventNames(scopes) as string[]).includes(row.type)) throw notFound("Event", eventId);
  return toFeedEvent(row);
}

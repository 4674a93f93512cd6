/**
 * `events.follow` (CONTRACT "Events feed"; issue 31): an async iterator over the events feed in commit order that
 * never ends by itself. It reads `GET /v1/ext/events?after=<cursor>` page after page while `Link: rel="next"`
 * follows, then polls with a bounded, doubling wait while nothing new commits ({@link followDelayMs}); its `cursor`
 * is the `event_id` to resume from. Waits go through the client's clock (tests replace it with a virtual one).
 */
import { clock } from "./clock";
import { ConnectionError, RateLimitError, ServerError } from "./errors";
import type { EventPage } from "./pagination";
import type { EventListQuery, FeedEvent } from "./types";

/** Default wait (ms) before polling again after a read that brought events but no next page. */
export const FOLLOW_MIN_INTERVAL_MS = 2_000;
/** Default longest wait (ms) between polls of an idle feed. */
export const FOLLOW_MAX_INTERVAL_MS = 30_000;
/** Transient failures in a row (after the client's own retries) that `follow` waits out before it throws. */
export const FOLLOW_MAX_TRANSIENT_FAILURES = 5;

/** Options of `events.follow`: where to start, when to stop, the filters and page size of its reads, its waits. */
export interface FollowOptions extends Omit<EventListQuery, "after" | "cursor"> {
  /**
   * The `event_id` to start after (a `cursor` saved from an earlier follow, a delivery's `webhook-id`, an event from
   * `events.list`). Omitted: the events committed after the newest one when follow starts (on a feed with no event
   * yet, every event from the first one on).
   */
  after?: string;
  /** Aborting it ends the iteration at once (no error), also during a wait or a read. */
  signal?: AbortSignal;
  /** Wait (ms) after a read that brought events but no next page, and the first wait of an idle feed; > 0, default 2,000. */
  minIntervalMs?: number;
  /** Longest wait (ms) between polls of an idle feed; >= `minIntervalMs`, default 30,000. */
  maxIntervalMs?: number;
}

/** Reads one page of the feed (`events.list`). */
export type FeedReader = (query: EventListQuery) => Promise<EventPage>;

/**
 * The wait (ms) before poll number `idlePolls + 1` of a feed that answered nothing new `idlePolls` times in a row:
 * `min * 2^idlePolls`, capped at `max` (with the defaults 2, 4, 8, 16, 30, 30, ... seconds).
 */
export function followDelayMs(idlePolls: number, min: number, max: number): number {
  return Math.min(min * 2 ** Math.min(idlePolls, 30), max);
}

/** Network errors, timeouts, 5xx and 429s: worth waiting out while following. */
function isTransient(err: unknown): boolean {
  return err instanceof ConnectionError || err instanceof ServerError || err instanceof RateLimitError;
}

/** Returned by the abortable steps when the signal fired first. */
const ABORTED = Symbol("aborted");

/**
 * The iterator `events.follow` returns: `for await (const event of follower)`, and `follower.cursor` to persist.
 * One consumer at a time (as any async generator).
 */
export class EventFollower implements AsyncIterableIterator<FeedEvent> {
  private position: string | null;
  private readonly events: AsyncGenerator<FeedEvent, void, undefined>;
  private readonly filters: Omit<EventListQuery, "after" | "cursor">;
  private readonly minMs: number;
  private readonly maxMs: number;
  private readonly signal: AbortSignal | undefined;

  /**
   * @param read reads one page of the feed.
   * @param options see {@link FollowOptions}.
   */
  constructor(
    private readonly read: FeedReader,
    options: FollowOptions,
  ) {
    const { after, signal, minIntervalMs = FOLLOW_MIN_INTERVAL_MS, maxIntervalMs = FOLLOW_MAX_INTERVAL_MS, ...filters } = options;
    this.position = after ?? null;
    this.filters = filters;
    this.minMs = minIntervalMs;
    this.maxMs = maxIntervalMs;
    this.signal = signal;
    this.events = this.run(after);
  }

  /**
   * The `event_id` to resume from: the last event yielded, or a later one the reads went past (events the filters
   * or the key's scopes leave out); before the first event, the `after` given (or, without one, the newest event
   * when follow started, once known; null until then). Pass it as `after` to a later `follow` to continue exactly
   * where this one stopped.
   */
  get cursor(): string | null {
    return this.position;
  }

  next(): Promise<IteratorResult<FeedEvent, void>> {
    return this.events.next();
  }

  /** Ends the iteration (what `break` out of `for await` calls). */
  return(): Promise<IteratorResult<FeedEvent, void>> {
    return this.events.return(undefined);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private async *run(after: string | undefined): AsyncGenerator<FeedEvent, void, undefined> {
    if (after !== undefined && (typeof after !== "string" || after.trim() === "")) throw new TypeError("Stageline: events.follow `after` must be a non-empty event id");
    if (!(this.minMs > 0 && Number.isFinite(this.minMs)) || !(this.maxMs >= this.minMs && Number.isFinite(this.maxMs))) {
      throw new TypeError("Stageline: events.follow needs 0 < minIntervalMs <= maxIntervalMs (finite milliseconds)");
    }
    let idlePolls = 0;
    if (this.position === null) {
      // No `after`: start after the newest event (read without filters: any event the key reads is a position). On
      // a feed with no event yet, wait for the first ones; everything in the feed is then new.
      let emptyAtStart = false;
      while (this.position === null) {
        const top = await this.readPage({ limit: 1 });
        if (top === ABORTED) return;
        const newest = top.data[0];
        if (newest === undefined) {
          emptyAtStart = true;
          if (!(await this.pause(followDelayMs(idlePolls++, this.minMs, this.maxMs)))) return;
          continue;
        }
        if (emptyAtStart) {
          // Every event now in the feed committed after follow started: read them newest first, then yield them
          // oldest first. Those committed during this walk are in it or after `newest`.
          const all: FeedEvent[] = [];
          let cursor: string | undefined;
          do {
            const page = await this.readPage({ ...this.filters, cursor });
            if (page === ABORTED) return;
            all.push(...page.data);
            cursor = page.nextCursor ?? undefined;
          } while (cursor !== undefined);
          for (const event of all.reverse()) {
            this.position = event.event_id;
            yield event;
            if (this.signal?.aborted) return;
          }
        }
        this.position ??= newest.event_id;
      }
      idlePolls = 0;
    }
    for (;;) {
      const page = await this.readPage({ ...this.filters, after: this.position });
      if (page === ABORTED) return;
      for (const event of page.data) {
        this.position = event.event_id;
        yield event;
        if (this.signal?.aborted) return;
      }
      if (page.nextAfter !== null) {
        // More committed already: the next page at once, from where this read stopped (past filtered-out events).
        this.position = page.nextAfter;
        idlePolls = 0;
        continue;
      }
      if (page.data.length > 0) idlePolls = 0;
      const delay = page.data.length > 0 ? this.minMs : followDelayMs(idlePolls++, this.minMs, this.maxMs);
      if (!(await this.pause(delay))) return;
    }
  }

  /**
   * One read, its transient failures waited out (doubling waits, at most FOLLOW_MAX_TRANSIENT_FAILURES in a row).
   * @returns the page, or ABORTED when the signal fired first (the read's answer is then dropped).
   * @throws what the read threw when it is not transient or failed too often.
   */
  private async readPage(query: EventListQuery): Promise<EventPage | typeof ABORTED> {
    for (let failures = 0; ; failures++) {
      if (this.signal?.aborted) return ABORTED; // nothing is sent once aborted
      try {
        return await this.abortable(this.read(query));
      } catch (err) {
        if (!isTransient(err) || failures + 1 >= FOLLOW_MAX_TRANSIENT_FAILURES) throw err;
        if (!(await this.pause(followDelayMs(failures, this.minMs, this.maxMs)))) return ABORTED;
      }
    }
  }

  /** Waits `ms` on the client's clock. @returns false when the signal fired (at once, or during the wait). */
  private async pause(ms: number): Promise<boolean> {
    return (await this.abortable(clock.sleep(ms).then(() => true))) === true;
  }

  /** `work`, or ABORTED as soon as the signal fires (a later rejection of `work` is then ignored). */
  private abortable<T>(work: Promise<T>): Promise<T | typeof ABORTED> {
    const signal = this.signal;
    if (!signal) return work;
    if (signal.aborted) {
      work.catch(() => {});
      return Promise.resolve(ABORTED);
    }
    let onAbort: () => void = () => {};
    const aborted = new Promise<typeof ABORTED>((resolve) => {
      onAbort = () => resolve(ABORTED);
      signal.addEventListener("abort", onAbort, { once: true });
    });
    work.catch(() => {});
    return Promise.race([work, aborted]).finally(() => signal.removeEventListener("abort", onAbort));
  }
}

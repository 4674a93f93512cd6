/**
 * `client.events` (CONTRACT "Events feed (catch up without a public URL)", "Lists"): the company's retained events,
 * newest first, or in commit order after a given event (`after`), and `follow`, which keeps reading the feed as new
 * events commit. A key reads the events its scopes cover: `items:read` item and note events, `tasks:read` task events.
 */
import { requireId, unwrap, type ApiContext } from "../api";
import { EventFollower, type FollowOptions } from "../event-follower";
import { iteratePages, nextLinkParams, type EventPage } from "../pagination";
import type { EventListQuery, FeedEvent } from "../types";

/** The events feed. */
export class Events {
  constructor(private readonly ctx: ApiContext) {}

  /**
   * One page of events (GET /v1/ext/events; scope `items:read` or `tasks:read`). Without `after`: newest first,
   * continued with `cursor: page.nextCursor`. With `after` (an `event_id`): the events committed after that one,
   * oldest first, in the order deliveries follow, continued with `after: page.nextAfter`.
   * @param query `event` (comma-separated names), `resource_id`, `pipeline_id`, `after`, `limit` (1..500, default
   * 100), `cursor` (not together with `after`).
   * @returns `{ data, nextCursor, nextAfter }`.
   * @throws CursorExpiredError (410 `cursor_expired`) when `after` is no longer retained; ValidationError (400: an
   * unknown event name, a bad cursor, `after` with `cursor`); PermissionError (403: neither read scope); other
   * StagelineErrors, ConnectionError.
   */
  async list(query: EventListQuery = {}): Promise<EventPage> {
    const result = await this.ctx.read((fetch) => this.ctx.api.GET("/v1/ext/events", { params: { query }, fetch }));
    const data = await unwrap(Promise.resolve(result));
    const next = nextLinkParams(result.response.headers.get("link"));
    return { data, nextCursor: next?.get("cursor") ?? null, nextAfter: next?.get("after") ?? null };
  }

  /**
   * Every event matching `query`, one by one across all pages, fetching a page only when the caller reaches it:
   * newest first to the oldest retained one, or, with `after`, in commit order up to the newest event now (it then
   * ends; `follow` keeps waiting for new ones).
   * @throws as `list`, from the `next()` that needed the failing page.
   */
  iterate(query: EventListQuery = {}): AsyncGenerator<FeedEvent, void, undefined> {
    if (query.after === undefined) return iteratePages((cursor) => this.list({ ...query, cursor }), query.cursor);
    return iteratePages(async (after) => {
      const page = await this.list({ ...query, after: after ?? query.after });
      return { data: page.data, nextCursor: page.nextAfter };
    });
  }

  /**
   * One event (GET /v1/ext/events/{event_id}), e.g. the one a delivery's `webhook-id` names.
   * @throws NotFoundError when it is not a retained event of the company or the key's scopes cannot read it.
   * @throws TypeError (the promise rejects, nothing is sent) when an id is empty or blank.
   */
  async get(id: string): Promise<FeedEvent> {
    const path = { event_id: requireId("id", id) };
    return unwrap(this.ctx.read((fetch) => this.ctx.api.GET("/v1/ext/events/{event_id}", { params: { path }, fetch })));
  }

  /**
   * Follows the feed: an async iterator of the events committed after `options.after` (or, without it, after the
   * newest event when it starts), in commit order, each exactly once, waiting for new ones when it has caught up.
   * It reads page after page at once while a `Link: rel="next"` follows; once caught up it polls again after
   * `minIntervalMs` (default 2 s) when the last read brought events, else after a wait that doubles on every empty
   * read from `minIntervalMs` up to `maxIntervalMs` (default 30 s). Its `cursor` is the `event_id` to resume from
   * (the last event it yielded, or a later one it has read past): persist it and pass it as `after` next time.
   * `for await (const event of client.events.follow({ after: saved, signal }))`.
   * Network errors, timeouts, 5xx and 429s that outlast the client's own retries are waited out with the same
   * doubling wait, up to 5 times in a row, then thrown. Aborting `signal` ends the iteration (no error) at once.
   * @throws CursorExpiredError when `after` (or the cursor it reached) is no longer retained: resynchronise; other
   * StagelineErrors (e.g. PermissionError), ConnectionError; TypeError for invalid options (at the first `next()`).
   */
  follow(options: FollowOptions = {}): EventFollower {
    return new EventFollower((query) => this.list(query), options);
  }
}

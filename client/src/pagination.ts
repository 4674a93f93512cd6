/**
 * Paging (CONTRACT "Lists"): a list answer is one page, a JSON array, newest first; when more remain, the
 * `Link: <...>; rel="next"` header (RFC 8288) carries the next page's URL. `list` gives one page with the cursor of
 * that URL; `iterate` walks every page lazily.
 */
import type { FeedEvent } from "./types";

/** One page of a list: the records and the cursor of the next page (null on the last page). */
export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

/**
 * One page of the feed. `nextCursor`: the cursor of the next page in the newest-first order; `nextAfter`: with
 * `after`, the `after` of the next page (the `Link: rel="next"` URL's). At most one of them is set; both are null on
 * the last page. A page may be short, even empty, while a next one follows (the server examines a bounded number of
 * events per page, so filters that match little give short pages).
 */
export interface EventPage extends Page<FeedEvent> {
  nextAfter: string | null;
}

/**
 * The `cursor` query value of the `rel="next"` link of a `Link` header, or null when there is no next page.
 * @param link the raw header value (several links may be comma-separated), or null.
 */
export function nextCursorFromLink(link: string | null): string | null {
  return nextLinkParams(link)?.get("cursor") ?? null;
}

/**
 * The query parameters of the `rel="next"` link of a `Link` header (e.g. `cursor`, or `after` for the events feed
 * followed in commit order), or null when there is no next link.
 * @param link the raw header value (several links may be comma-separated), or null.
 */
export function nextLinkParams(link: string | null): URLSearchParams | null {
  if (!link) return null;
  for (const match of link.matchAll(/<([^>]*)>\s*((?:;\s*[^;,]+)*)/g)) {
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(match[2] ?? "");
    const relations = (rel?.[1] ?? rel?.[2] ?? "").toLowerCase().split(/\s+/);
    if (!relations.includes("next")) continue;
    return new URL(match[1] ?? "", "http://link.invalid").searchParams;
  }
  return null;
}

/**
 * Yields every record of every page, fetching a page only when the caller has consumed the previous one.
 * @param fetchPage fetches the page at `cursor` (undefined: the first page, or the caller's own starting cursor).
 * @param cursor where to start (the query's `cursor`, if any).
 */
export async function* iteratePages<T>(fetchPage: (cursor: string | undefined) => Promise<Page<T>>, cursor?: string): AsyncGenerator<T, void, undefined> {
  let next: string | undefined = cursor;
  do {
    const page = await fetchPage(next);
    // A plain loop: `yield*` over an array in an async generator goes through an async-from-sync iterator, about
    // twice the cost per record (measured: 0.04 against 0.02 ms per page of 100).
    for (const record of page.data) yield record;
    next = page.nextCursor ?? undefined;
  } while (next !== undefined);
}

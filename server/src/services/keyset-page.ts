/**
 * Keyset pages for the console (CONTRACT.md "Lists": newest first by (created_at desc, id desc)): a list fetched
 * with `limit + 1` rows becomes one page plus the opaque cursor of the next, which the console puts in its
 * "Next page" link.
 */
import { encodeKeysetCursor, type KeysetPosition } from "@stageline/shared";

/** One page of a keyset-paginated list. */
export interface Page<T> {
  items: T[];
  /** The cursor of the next page, or null on the last page. */
  next: string | null;
}

/** Given rows fetched with `take: limit + 1`, the first `limit` and, when a further row exists, the next cursor. */
export function toPage<T extends KeysetPosition>(rows: T[], limit: number): Page<T> {
  if (rows.length <= limit) return { items: rows, next: null };
  const items = rows.slice(0, limit);
  return { items, next: encodeKeysetCursor(items[items.length - 1]!) };
}

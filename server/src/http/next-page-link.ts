/**
 * The next page's URL in a `Link: <...>; rel="next"` header (RFC 8288), for keyset-paginated lists (CONTRACT "Lists").
 */
import type { Request, Response } from "express";
import { encodeKeysetCursor, type KeysetPosition } from "@stageline/shared";

/**
 * Given rows fetched with `take: limit + 1`, returns the page and sets the `Link: rel="next"` header when a further
 * row exists (beside any Link already set). The next URL is the request's own URL with `cursor` replaced by
 * `cursorOf(last row of the page)` (`setNextLink`).
 */
export function pageWithLinkBy<T>(req: Request, res: Response, rows: T[], limit: number, cursorOf: (last: T) => string): T[] {
  if (rows.length <= limit) return rows;
  const page = rows.slice(0, limit);
  setNextLink(req, res, { cursor: cursorOf(page[page.length - 1]!), limit: String(limit) });
  return page;
}

/** `pageWithLinkBy` for lists in the (created_at desc, id desc) keyset order. */
export function pageWithLink<T extends KeysetPosition>(req: Request, res: Response, rows: T[], limit: number): T[] {
  return pageWithLinkBy(req, res, rows, limit, encodeKeysetCursor);
}

/**
 * Sets `Link: <...>; rel="next"` (beside any Link already set) to the request's own URL with the query parameters
 * `params` set (replacing their values) and `remove` deleted.
 */
export function setNextLink(req: Request, res: Response, params: Record<string, string>, remove: readonly string[] = []): void {
  const url = new URL(req.originalUrl, `${req.protocol}://${req.get("host")}`);
  for (const name of remove) url.searchParams.delete(name);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  // append: a deprecated list already carries `Link: <...>; rel="deprecation"` (http/deprecation.ts).
  res.append("Link", `<${url.toString()}>; rel="next"`);
}

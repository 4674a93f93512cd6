/**
 * The next page's URL in a `Link: <...>; rel="next"` header (RFC 8288), for keyset-paginated lists (CONTRACT "Lists").
 */
import type { Request, Response } from "express";
import { encodeKeysetCursor, type KeysetPosition } from "@stageline/shared";

/**
 * Given rows fetched with `take: limit + 1`, returns the page and sets the `Link: rel="next"` header when a further
 * row exists (beside any Link already set). The next URL is the request's own URL with `cursor` replaced by
 * `cursorOf(last row of the page)`.
 */
export function pageWithLinkBy<T>(req: Request, res: Response, rows: T[], limit: number, cursorOf: (last: T) => string): T[] {
  if (rows.length <= limit) return rows;
  const page = rows.slice(0, limit);
  const last = page[page.length - 1]!;
  const url = new URL(req.originalUrl, `${req.protocol}://${req.get("host")}`);
  url.searchParams.set("cursor", cursorOf(last));
  url.searchParams.set("limit", String(limit));
  // append: a deprecated list already carries `Link: <...>; rel="deprecation"` (http/deprecation.ts).
  res.append("Link", `<${url.toString()}>; rel="next"`);
  return page;
}

/** `pageWithLinkBy` for lists in the (created_at desc, id desc) keyset order. */
export function pageWithLink<T extends KeysetPosition>(req: Request, res: Response, rows: T[], limit: number): T[] {
  return pageWithLinkBy(req, res, rows, limit, encodeKeysetCursor);
}

/**
 * Keyset pagination (CONTRACT.md "Lists"): lists are ordered newest first by (`created_at` desc, `id` desc); the
 * opaque `cursor` encodes the last row's (created_at, id), and the next page is the rows strictly after it, so a
 * page costs the same at any depth. The next page's URL travels in a `Link: <...>; rel="next"` header (RFC 8288).
 */
import type { Request, Response } from "express";
import { problem } from "./problem";

export interface KeysetPosition {
  createdAt: Date;
  id: string;
}

/** Encodes a position as an opaque base64url cursor. */
export function encodeKeysetCursor(position: KeysetPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt.toISOString(), position.id])).toString("base64url");
}

/**
 * Decodes a cursor made by `encodeKeysetCursor`.
 * @throws ProblemError 400 `validation_failed` when the cursor is malformed.
 */
export function decodeKeysetCursor(cursor: string): KeysetPosition {
  try {
    const [iso, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as [string, string];
    const createdAt = new Date(iso);
    if (typeof id !== "string" || Number.isNaN(createdAt.getTime())) throw new Error("bad cursor");
    return { createdAt, id };
  } catch {
    throw problem("validation_failed", "The cursor is not valid. Use the URL from the Link header as given.", {
      errors: [{ path: "cursor", message: "not a cursor returned by this API" }],
    });
  }
}

/**
 * Prisma `where` fragment for "rows after `position`" in (created_at desc, id desc) order.
 * Returns `{}` for the first page.
 */
export function keysetWhere(position: KeysetPosition | undefined) {
  if (!position) return {};
  // The redundant `created_at <= x` bound lets PostgreSQL start the index scan at the cursor; the OR alone does not
  // (measured: 61 ms vs 0.13 ms at depth 150,000 of 200k rows).
  return {
    createdAt: { lte: position.createdAt },
    OR: [
      { createdAt: { lt: position.createdAt } },
      { createdAt: position.createdAt, id: { lt: position.id } },
    ],
  };
}

/** The `orderBy` of every keyset-paginated list. */
export const KEYSET_ORDER = [{ createdAt: "desc" as const }, { id: "desc" as const }];

/**
 * Given rows fetched with `take: limit + 1`, returns the page and sets the `Link: rel="next"` header when a further
 * row exists. The next URL is the request's own URL with `cursor` replaced.
 */
export function pageWithLink<T extends KeysetPosition>(req: Request, res: Response, rows: T[], limit: number): T[] {
  if (rows.length <= limit) return rows;
  const page = rows.slice(0, limit);
  const last = page[page.length - 1]!;
  const url = new URL(req.originalUrl, `${req.protocol}://${req.get("host")}`);
  url.searchParams.set("cursor", encodeKeysetCursor(last));
  url.searchParams.set("limit", String(limit));
  res.setHeader("Link", `<${url.toString()}>; rel="next"`);
  return page;
}

/**
 * Keyset pagination cursors (CONTRACT "Lists"): lists are ordered newest first by (`created_at` desc, `id` desc); the
 * opaque `cursor` encodes the last row's (created_at, id), and the next page is the rows strictly after it. Encoding and
 * decoding live here so every edge reads cursors the same way; the SQL lives in the server's data layer.
 */
import { DomainError } from "./errors";

/** A row's place in the keyset order. */
export interface KeysetPosition {
  createdAt: Date;
  id: string;
}

/** Encodes a position as an opaque base64url cursor: base64url of the JSON `[created_at ISO 8601, id]`. */
export function encodeKeysetCursor(position: KeysetPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt.toISOString(), position.id])).toString("base64url");
}

/**
 * Decodes a cursor made by `encodeKeysetCursor`.
 * @throws DomainError `validation_failed` (path `cursor`) when the cursor is malformed.
 */
export function decodeKeysetCursor(cursor: string): KeysetPosition {
  try {
    const [iso, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as [string, string];
    const createdAt = new Date(iso);
    if (typeof id !== "string" || Number.isNaN(createdAt.getTime())) throw new Error("bad cursor");
    return { createdAt, id };
  } catch {
    throw new DomainError("validation_failed", "The cursor is not valid. Use the URL from the Link header as given.", {
      errors: [{ path: "cursor", message: "not a cursor returned by this API" }],
    });
  }
}

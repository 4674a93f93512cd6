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

/** The timestamp form `encodeKeysetCursor` writes (`Date#toISOString` of a year 0001..9999). */
const ISSUED_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Ids are 1..255 printable ASCII characters (the server issues UUIDs). */
const ISSUED_ID = /^[\x21-\x7e]{1,255}$/;

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
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (!Array.isArray(value) || value.length !== 2) throw new Error("not a pair");
    const [iso, id] = value as unknown[];
    // Exactly what encodeKeysetCursor writes: a UTC ISO 8601 timestamp with milliseconds in the years 0001..9999
    // (round-tripping rules out dates like 2026-02-31), and an id of printable characters.
    if (typeof iso !== "string" || !ISSUED_TIMESTAMP.test(iso)) throw new Error("not an issued timestamp");
    const createdAt = new Date(iso);
    if (Number.isNaN(createdAt.getTime()) || createdAt.toISOString() !== iso || createdAt.getUTCFullYear() < 1) throw new Error("not a real instant");
    if (typeof id !== "string" || !ISSUED_ID.test(id)) throw new Error("not an issued id");
    return { createdAt, id };
  } catch {
    throw new DomainError("validation_failed", "The cursor is not valid. Use the URL from the Link header as given.", {
      errors: [{ path: "cursor", message: "not a cursor returned by this API" }],
    });
  }
}

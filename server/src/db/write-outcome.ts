/**
 * The outcome of a one-statement write with its events (db/tasks.ts, db/notes.ts): written, or why nothing was
 * stored, so the service can answer with the right error.
 */
import type { StoredResponse } from "./idempotency";

/** Why a write stored nothing. */
export type RowWriteOutcome =
  | { written: true }
  /** The company row is gone (deleted, with its API keys, after the request was authenticated). */
  | { written: false; reason: "no_company" }
  /** The `item_id` to store is not an item of the company (or it was deleted meanwhile). */
  | { written: false; reason: "no_item" }
  /** Update only: the row changed (or was deleted) after it was read. */
  | { written: false; reason: "changed" }
  /** Create with a claim only: another request holds the key. */
  | { written: false; reason: "in_use" }
  /** Create with a claim only: the key has a stored response. */
  | { written: false; reason: "stored"; stored: StoredResponse };

/**
 * The Note format (CONTRACT "Notes"): one function turns a stored note into the object every note endpoint, note
 * event payload and the note sample return, so they can never drift apart.
 */
import type { Note } from "@stageline/shared";
import type { NoteRecord } from "../db/note-record";
import { toIsoTimestamp } from "./iso-timestamp";

/** Formats a note: `{ note_id, item_id, body, pinned, created_by, created_at, updated_at, version }`. */
export function toNoteResponse(row: NoteRecord): Note {
  return {
    note_id: row.id,
    item_id: row.itemId,
    body: row.body,
    pinned: row.pinned,
    created_by: row.createdBy,
    created_at: toIsoTimestamp(row.createdAt),
    updated_at: toIsoTimestamp(row.updatedAt),
    version: row.version,
  };
}

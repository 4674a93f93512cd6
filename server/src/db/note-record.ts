/**
 * The stored note columns (data layer) that `toNoteResponse` (services/note-format.ts) formats: a row of table
 * `notes`, or a synthetic sample row (CONTRACT "Notes").
 */
export interface NoteRecord {
  id: string;
  itemId: string;
  /** Markdown text, 1..65,536 characters, no U+0000. */
  body: string;
  pinned: boolean;
  /** The creating API key's id, or the console user's id. */
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
  /** 1 on create, +1 on every change. */
  version: number;
}

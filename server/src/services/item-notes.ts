/**
 * The notes of one item as the console shows and changes them (issue 30 item 5, CONTRACT "Notes"). Reads and writes
 * go through services/notes.ts, the API's service, so the console writes the same rows and the same `note.created`,
 * `note.updated` and `note.deleted` events; `created_by` is the console user's id. Each console write also records an
 * audit entry (action, the note's id, the item's short ID, which fields changed), never the body.
 *
 * Every function takes the company and the item: a note of another item, or of another company, is `404`.
 */
import { encodeKeysetCursor, NOTE_BODY_MAX, NoteCreateSchema, NoteDeleteQuerySchema, NoteUpdateSchema, parseInput, type Note } from "@stageline/shared";
import type { AppContext } from "../context";
import { listKeys } from "./api-keys";
import { recordAudit, type AuditAction, type AuditActor } from "./audit-log";
import { domainError, notFound } from "./errors";
import type { Page } from "./keyset-page";
import { createNote, deleteNote, getNote, listNotes, updateNote } from "./notes";
import { listUsers } from "./users";

/** How many notes the item page shows per list (pinned, then the others), with a link to the next page of each. */
export const ITEM_NOTES_SHOWN = 20;

/**
 * How many body characters one list of the item page shows at most (two notes of the contract's largest size): a
 * page stops before the note that would pass it, so long notes move to the next page. It bounds the page's Markdown
 * rendering (40 notes of 65,536 characters took 9-14 s to render and were 8-16 MB of HTML).
 */
export const ITEM_NOTES_BODY_BUDGET = 2 * NOTE_BODY_MAX;

/** A note as the item page shows it. */
export interface ItemNote {
  id: string;
  /** Markdown as stored (the page renders it with console/note-markdown.ts). */
  body: string;
  pinned: boolean;
  /** Who added it: a console user's email, `API key "<name>"`, or "a removed user or key". */
  author: string;
  createdAt: Date;
  updatedAt: Date;
  version: number;
}

/** The item page's notes: pinned ones (newest first), then the others (newest first), a keyset page each. */
export interface ItemNotes {
  pinned: Page<ItemNote>;
  others: Page<ItemNote>;
}

/** Where a page of notes starts: `pinnedCursor` or `cursor` (from a "More" link) shows only that list from there. */
export interface ItemNotesPosition {
  cursor?: string | undefined;
  pinnedCursor?: string | undefined;
}

const EMPTY: Page<ItemNote> = { items: [], next: null };

/**
 * The item's notes for its console page: pinned first, then the others, newest first in each, at most
 * {@link ITEM_NOTES_SHOWN} notes and {@link ITEM_NOTES_BODY_BUDGET} body characters per list, with the next page's
 * cursor. The first page (no cursor) has both lists; a
 * `cursor` continues the others only, a `pinnedCursor` the pinned only. The caller has checked the item is the
 * company's (services/pipeline-views.ts `describeItem`).
 * @throws DomainError 400 `validation_failed` for a cursor this server did not issue.
 */
export async function listItemNotes(ctx: AppContext, companyId: string, itemId: string, at: ItemNotesPosition = {}): Promise<ItemNotes> {
  const page = async (pinned: boolean, cursor: string | undefined) => {
    const rows = await listNotes(ctx, companyId, { item_id: itemId, pinned, limit: ITEM_NOTES_SHOWN, cursor });
    return pageWithinBudget(rows);
  };
  const [pinned, others] = await Promise.all([
    at.cursor ? null : page(true, at.pinnedCursor),
    at.pinnedCursor ? null : page(false, at.cursor),
  ]);
  const authors = await authorLabels(ctx, companyId);
  const shownPage = (p: Awaited<ReturnType<typeof page>> | null): Page<ItemNote> =>
    p
      ? {
          next: p.next,
          items: p.items.map((row) => ({
            id: row.id,
            body: row.body,
            pinned: row.pinned,
            author: authors.get(row.createdBy) ?? "a removed user or key",
            createdAt: row.createdAt,
            updatedAt: row.updatedAt,
            version: row.version,
          })),
        }
      : EMPTY;
  return { pinned: shownPage(pinned), others: shownPage(others) };
}

/**
 * The first notes of `rows` (fetched with `ITEM_NOTES_SHOWN + 1`) that fit ITEM_NOTES_SHOWN notes and
 * ITEM_NOTES_BODY_BUDGET body characters (always at least one), and the cursor after the last one shown when more
 * remain.
 */
function pageWithinBudget<T extends { id: string; createdAt: Date; body: string }>(rows: T[]): Page<T> {
  let shown = 0;
  let characters = 0;
  for (const row of rows.slice(0, ITEM_NOTES_SHOWN)) {
    if (shown > 0 && characters + row.body.length > ITEM_NOTES_BODY_BUDGET) break;
    characters += row.body.length;
    shown++;
  }
  if (shown === rows.length) return { items: rows, next: null };
  const items = rows.slice(0, shown);
  return { items, next: encodeKeysetCursor(items[shown - 1]!) };
}

/** Labels of everyone who may have written a note of the company: its users (email) and API keys (name). */
async function authorLabels(ctx: AppContext, companyId: string): Promise<Map<string, string>> {
  const [users, keys] = await Promise.all([listUsers(ctx.prisma, companyId), listKeys(ctx.prisma, companyId)]);
  const labels = new Map<string, string>();
  for (const key of keys) labels.set(key.id, `API key "${key.name}"`);
  for (const user of users) labels.set(user.id, user.email);
  return labels;
}

/**
 * The company's note `noteId` of item `itemId`, in the Note format, with its author's label.
 * @throws DomainError 404 `not_found` when the note is unknown, another company's, or of another item.
 */
export async function getItemNote(ctx: AppContext, companyId: string, itemId: string, noteId: string): Promise<Note & { author: string }> {
  const note = await getNote(ctx, companyId, noteId);
  if (note.item_id !== itemId) throw notFound("Note", noteId);
  const author = (await authorLabels(ctx, companyId)).get(note.created_by) ?? "a removed user or key";
  return { ...note, author };
}

/** Who writes a note in the console: the signed-in user, their company, their IP, and the item (id, short ID). */
export interface NoteWriter {
  user: { id: string; email: string };
  companyId: string;
  ip: string | null;
  item: { id: string; shortId: string };
}

/**
 * Adds a note to the writer's item as the console user (`created_by` = the user's id), with `note.created`, and
 * audits `note.created`.
 * @param form `body` (Markdown as typed) and `pinned`.
 * @throws DomainError 400 `validation_failed` (`errors[].path` `body`) for an empty, blank, NUL-bearing or too long
 *   body; 422 `invalid_reference` when the item was deleted meanwhile.
 */
export async function addItemNote(ctx: AppContext, writer: NoteWriter, form: { body: string; pinned: boolean }): Promise<Note> {
  const input = parseInput(NoteCreateSchema, { item_id: writer.item.id, body: form.body, pinned: form.pinned }, "form");
  const note = await createNote(ctx, writer.companyId, writer.user.id, input);
  await audit(ctx, writer, "note.created", note.note_id, { pinned: note.pinned });
  return note;
}

/**
 * Replaces a note's body, at `version` (the version the user edited). Audits `note.updated` with `changed_fields`
 * when the body changed; an edit that changes nothing writes nothing.
 * @returns the note after the edit, and whether it changed.
 * @throws DomainError 404 `not_found` (another item's or company's note, or deleted); 409 `version_conflict` with
 *   `current_version` when the note changed since `version`; 400 `validation_failed` for a bad body.
 */
export async function editItemNote(ctx: AppContext, writer: NoteWriter, noteId: string, form: { body: string; version: unknown }): Promise<{ note: Note; changed: boolean }> {
  const input = parseInput(NoteUpdateSchema, { body: form.body, version: formVersion(form.version) }, "form");
  const before = await getItemNote(ctx, writer.companyId, writer.item.id, noteId);
  const note = await updateNote(ctx, writer.companyId, noteId, input);
  const changed = note.version !== before.version;
  if (changed) await audit(ctx, writer, "note.updated", noteId, { changed_fields: ["body"], version: note.version });
  return { note, changed };
}

/**
 * Pins or unpins a note. Setting `pinned` is idempotent and leaves the body alone, so it takes no version: pinning a
 * note someone just edited pins their edit. Audits `note.pinned` / `note.unpinned` when it changed.
 * @throws DomainError 404 `not_found` (another item's or company's note, or deleted).
 */
export async function pinItemNote(ctx: AppContext, writer: NoteWriter, noteId: string, pinned: boolean): Promise<Note> {
  const before = await getItemNote(ctx, writer.companyId, writer.item.id, noteId);
  const note = await updateNote(ctx, writer.companyId, noteId, { pinned });
  if (note.version !== before.version) await audit(ctx, writer, pinned ? "note.pinned" : "note.unpinned", noteId, { version: note.version });
  return note;
}

/**
 * Deletes a note at `version` (the version shown on the confirmation page) with the API's deletion: `note.deleted`
 * and every stored copy of its body erased. Audits `note.deleted`.
 * @throws DomainError 404 `not_found`; 409 `version_conflict` with `current_version` when it changed since.
 */
export async function deleteItemNote(ctx: AppContext, writer: NoteWriter, noteId: string, version: unknown): Promise<void> {
  const expected = formVersion(version);
  await getItemNote(ctx, writer.companyId, writer.item.id, noteId);
  await deleteNote(ctx, writer.companyId, noteId, expected);
  await audit(ctx, writer, "note.deleted", noteId, {});
}

/**
 * The `version` field of a console form (the version of the note the page showed, as digits), as a number. Required:
 * a console edit or delete is always based on a version the user saw, so it never overwrites a change unseen.
 * @throws DomainError 400 `validation_failed` when missing or not a whole number from 1 upward.
 */
function formVersion(value: unknown): number {
  const { version } = parseInput(NoteDeleteQuerySchema, { version: typeof value === "string" ? value : undefined }, "form");
  if (version === undefined) {
    const message = "The form lacks the note's version: open the note again from its item page.";
    throw domainError("validation_failed", message, { errors: [{ path: "version", message }] });
  }
  return version;
}

/** One audit entry of a console note write: the note's id, the item's short ID as its label, never the body. */
function audit(ctx: AppContext, writer: NoteWriter, action: AuditAction, noteId: string, details: Record<string, string[] | number | boolean>) {
  const actor: AuditActor = { type: "user", id: writer.user.id, email: writer.user.email };
  return recordAudit(ctx.prisma, {
    companyId: writer.companyId,
    actor,
    action,
    target: { type: "note", id: noteId, label: `Note on ${writer.item.shortId}` },
    ip: writer.ip,
    details: { item_id: writer.item.id, ...details },
  });
}

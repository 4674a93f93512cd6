/**
 * Notes (CONTRACT "Notes", "Lists", "Idempotency", "Previous values in update events", "Item deletion and erasure"):
 * list, get, create, update and delete the notes of one company. Domain rules live here: defaults, the `item_id`
 * reference check's answer, version locking, which outbox events (`note.created`, `note.updated`, `note.deleted`) a
 * change writes and their payloads (the Note format). Each create and update is written with its events in ONE
 * statement (db/notes.ts), as tasks are; a deletion is one transaction that also erases every stored copy of the body.
 *
 * Every function takes `companyId`: a note or item of another company is "not found" (404 / 422), never revealed.
 * Writers pass `createdBy`: the API key's id, or the console user's id when written in the console.
 */
import {
  createProblem,
  decodeKeysetCursor,
  NOTE_CHANGE_FIELDS,
  resourceLocation,
  type Note,
  type NoteChangedEvent,
  type NoteChangeField,
  type NoteCreate,
  type NoteDeletedEvent,
  type NoteListQuery,
  type NoteUpdate,
} from "@stageline/shared";
import type { AppContext } from "../context";
import type { NoteRecord } from "../db/note-record";
import * as db from "../db/notes";
import { uuidv7 } from "../db/webhook-dispatch";
import type { Note as NoteRow } from "../generated/prisma/client";
import { unknownApiKey } from "./api-keys";
import { domainError, notFound, type DomainError } from "./errors";
import { keyInUse, StoredResponseFound, type IdempotencyClaim } from "./idempotency";
import { toIsoTimestamp } from "./iso-timestamp";
import { toNoteResponse } from "./note-format";

/**
 * One page of the company's notes, newest first (created_at desc, id desc), filtered by `item_id`, `pinned` and
 * `updated_after` (strictly after), combined with AND (CONTRACT "Notes", "Lists"). An `item_id` of no item of the
 * company simply matches nothing (empty page).
 * @returns up to `query.limit + 1` stored rows: the extra row tells `pageWithLink` that a next page exists.
 * @throws DomainError 400 `validation_failed` for a cursor this API did not issue.
 */
export function listNotes(ctx: AppContext, companyId: string, query: NoteListQuery): Promise<NoteRow[]> {
  const after = query.cursor ? decodeKeysetCursor(query.cursor) : undefined;
  const filters: db.NoteFilters = {
    itemId: query.item_id,
    pinned: query.pinned,
    updatedAfter: query.updated_after ? new Date(query.updated_after) : undefined,
  };
  return db.listNotes(ctx.prisma, companyId, filters, after, query.limit + 1);
}

/**
 * One note of the company in the Note format (GET /v1/ext/notes/{note_id}).
 * @throws DomainError 404 `not_found` when the note does not exist or belongs to another company.
 */
export async function getNote(ctx: AppContext, companyId: string, noteId: string): Promise<Note> {
  const { note } = await db.readNote(ctx.prisma, companyId, noteId);
  if (!note) throw notFound("Note", noteId);
  return toNoteResponse(note);
}

/**
 * Creates a note on an item of the company (POST /v1/ext/notes): version 1, `pinned` false unless given,
 * `created_by` = `createdBy` (the API key's id, or the console user's id). The note, `note.created` (payload: the
 * Note as returned) and its deliveries are written in ONE statement (db/notes.ts `insertNoteWithEvents`), which locks
 * the company and the item against deletion first; then the dispatcher is woken. With an idempotency `claim`
 * (CONTRACT "Idempotency") the same statement takes the key and stores the 201 response.
 * @returns the stored note in the Note format.
 * @throws DomainError 422 `invalid_reference` when `item_id` is not an item of the company (unknown, another
 *   company's, or deleted); 401 `invalid_api_key` when the company was deleted after the key was checked; with a
 *   claim, StoredResponseFound or 409 `idempotency_key_in_use` (nothing is written then).
 */
export async function createNote(ctx: AppContext, companyId: string, createdBy: string, input: NoteCreate, claim?: IdempotencyClaim): Promise<Note> {
  const now = new Date();
  const record: NoteRecord = {
    id: uuidv7(now.getTime()),
    itemId: input.item_id,
    body: input.body,
    pinned: input.pinned ?? false,
    createdBy,
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
  const created = toNoteResponse(record);
  const events = [{ id: uuidv7(now.getTime()), type: "note.created", payload: created }];
  const location = resourceLocation("notes", created.note_id);
  const outcome = await db.insertNoteWithEvents(ctx.prisma, companyId, record, events, claim && { claim, body: JSON.stringify(created), location });
  if (!outcome.written) throw notWrittenError(outcome, input.item_id);
  ctx.eventsCommitted();
  return created;
}

/** How many times `updateNote` reads and writes again after another write to the note got in between. */
const UPDATE_ATTEMPTS = 100;

/**
 * Updates a note's `body` and/or `pinned` (PATCH /v1/ext/notes/{note_id}; its `item_id` never changes). With
 * `input.version`, the note must be at that version (else 409). When something actually changed, `version` grows by
 * one, `updated_at` is now, and one `note.updated` is written with `changed_fields` (NOTE_CHANGE_FIELDS that changed)
 * and `previous` (their values before), in the same statement as the change (db/notes.ts `updateNoteWithEvents`,
 * which writes only if the note is still at the version read; otherwise the update is computed again on the newer
 * note). An update that changes nothing writes nothing and returns the note as it is.
 * @returns the note after the update, in the Note format.
 * @throws DomainError 404 `not_found` (unknown note or another company's, or deleted meanwhile); 409
 *   `version_conflict` with `current_version`; 401 `invalid_api_key` when the company was deleted.
 */
export async function updateNote(ctx: AppContext, companyId: string, noteId: string, input: NoteUpdate): Promise<Note> {
  for (let attempt = 1; ; attempt++) {
    const { company, note: current } = await db.readNote(ctx.prisma, companyId, noteId);
    if (!company) throw unknownApiKey();
    if (!current) throw notFound("Note", noteId);
    if (input.version !== undefined && input.version !== current.version) throw versionConflict(noteId, current.version, input.version, "updating");
    const changed = NOTE_CHANGE_FIELDS.filter((field) => input[field] !== undefined && input[field] !== current[field]);
    if (changed.length === 0) return toNoteResponse(current);
    const now = new Date();
    const next: NoteRecord = {
      ...current,
      body: input.body ?? current.body,
      pinned: input.pinned ?? current.pinned,
      updatedAt: now,
      version: current.version + 1,
    };
    const updated = toNoteResponse(next);
    const payload: NoteChangedEvent = { ...updated, changed_fields: changed, previous: previousValues(current, changed) };
    const outcome = await db.updateNoteWithEvents(ctx.prisma, companyId, current.version, next, [
      { id: uuidv7(now.getTime()), type: "note.updated", payload },
    ]);
    if (outcome.written) {
      ctx.eventsCommitted();
      return updated;
    }
    if (outcome.reason === "no_company") throw unknownApiKey();
    if (attempt >= UPDATE_ATTEMPTS) throw new Error(`note update: the note kept changing under ${UPDATE_ATTEMPTS} attempts in a row`);
  }
}

/** CONTRACT "Previous values in update events": the value before the change of each field in `changed`. */
function previousValues(before: NoteRecord, changed: readonly NoteChangeField[]): NoteChangedEvent["previous"] {
  const previous: NoteChangedEvent["previous"] = {};
  for (const field of changed) {
    if (field === "body") previous.body = before.body;
    else previous.pinned = before.pinned;
  }
  return previous;
}

/** `last_error` of an earlier delivery of a note that was still pending when the note was deleted. */
const ENDED_REASON = "note deleted: its payload was erased before this delivery was sent";

/**
 * Deletes the company's note `noteId` for good (DELETE /v1/ext/notes/{note_id}, `204`; the console's delete runs
 * this too). In one transaction (db/notes.ts `deleteNoteAndErase`): the note is locked, `version` checked, one
 * `note.deleted` (its last state plus `deleted_at`) written with its deliveries, and every stored copy of its body
 * erased: its earlier events' bodies become `{ note_id, item_id, erased: true }` (pending deliveries end as failed,
 * response excerpts cleared), its stored Idempotency-Key create response becomes a `410 payload_erased` problem. The
 * `note.deleted` body itself is erased once its last delivery ends (db/event-erasure.ts).
 * @throws DomainError 404 `not_found` (unknown, another company's, or deleted meanwhile); 409 `version_conflict`
 *   with `current_version` when `version` is not the current one; 401 `invalid_api_key` when the company is gone.
 */
export async function deleteNote(ctx: AppContext, companyId: string, noteId: string, version?: number): Promise<void> {
  const deletedAt = new Date();
  const outcome = await db.deleteNoteAndErase(ctx.prisma, {
    companyId,
    noteId,
    expectedVersion: version,
    deletedAt,
    location: resourceLocation("notes", noteId),
    erasedReplay: JSON.stringify(
      createProblem("payload_erased", `Note ${noteId}, which this request created, was deleted; its stored response was erased with it.`),
    ),
    endedReason: ENDED_REASON,
    event: (note) => {
      const payload: NoteDeletedEvent = { ...toNoteResponse(note), deleted_at: toIsoTimestamp(deletedAt) };
      return { id: uuidv7(deletedAt.getTime()), type: "note.deleted", payload };
    },
  });
  if (!outcome.deleted) {
    if (outcome.reason === "no_company") throw unknownApiKey();
    if (outcome.reason !== "version_conflict") throw notFound("Note", noteId);
    throw versionConflict(noteId, outcome.currentVersion, version!, "deleting");
  }
  if (outcome.deliveries > 0) ctx.eventsCommitted();
}

/** 409 `version_conflict` with `current_version` (CONTRACT "Errors"). */
function versionConflict(noteId: string, current: number, expected: number, doing: string): DomainError {
  return domainError(
    "version_conflict",
    `Note ${noteId} is at version ${current}, not ${expected}: it was changed since you read it. Fetch it again before ${doing} it.`,
    { current_version: current },
  );
}

/**
 * The error for a note create that stored nothing: 401 when the company is gone, 422 `invalid_reference` when
 * `itemId` is not an item of the company, the idempotency answers for a claimed key.
 */
function notWrittenError(outcome: Exclude<db.NoteWriteOutcome, { written: true }>, itemId: string): DomainError | StoredResponseFound {
  switch (outcome.reason) {
    case "no_company":
      return unknownApiKey();
    case "in_use":
      return keyInUse();
    case "stored":
      return new StoredResponseFound(outcome.stored);
    case "no_item":
    case "changed": {
      const message = `item_id ${itemId} is not an item of this company. Use the item_id of an existing item (GET /v1/ext/items).`;
      return domainError("invalid_reference", message, { errors: [{ path: "item_id", message }] });
    }
  }
}

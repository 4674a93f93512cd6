/**
 * `client.notes` (CONTRACT "Client library", "Notes"): the notes on items, Markdown text of 1..65,536 characters,
 * pinned or not. Reads need `items:read`, writes `items:write`.
 */
import { requireId, idempotencyKeyOf, unwrap, unwrapPage, type ApiContext, type CreateOptions } from "../api";
import { iteratePages, type Page } from "../pagination";
import type { Note, NoteCreate, NoteDeleteOptions, NoteListQuery, NoteUpdate } from "../types";

/** Notes on the company's items. */
export class Notes {
  constructor(private readonly ctx: ApiContext) {}

  /**
   * One page of notes, newest first (GET /v1/ext/notes; scope `items:read`).
   * @param query `item_id` (one item's notes), `pinned` (`"true"`/`"false"`), `updated_after` (ISO 8601), `limit`
   * (1..500), `cursor`.
   * @returns `{ data, nextCursor }`.
   * @throws StagelineError subclasses, ConnectionError.
   */
  list(query: NoteListQuery = {}): Promise<Page<Note>> {
    return unwrapPage(this.ctx.read((fetch) => this.ctx.api.GET("/v1/ext/notes", { params: { query }, fetch })));
  }

  /**
   * Every note matching `query` across all pages, fetching a page only when the caller reaches it.
   * @throws as `list`.
   */
  iterate(query: NoteListQuery = {}): AsyncGenerator<Note, void, undefined> {
    return iteratePages((cursor) => this.list({ ...query, cursor }), query.cursor);
  }

  /**
   * One note (GET /v1/ext/notes/{note_id}).
   * @throws NotFoundError when no note of this company has that id (deleted ones included).
   * @throws TypeError (the promise rejects, nothing is sent) when an id is empty or blank.
   */
  async get(id: string): Promise<Note> {
    const path = { note_id: requireId("id", id) };
    return unwrap(this.ctx.read((fetch) => this.ctx.api.GET("/v1/ext/notes/{note_id}", { params: { path }, fetch })));
  }

  /**
   * Adds a note to an item (POST /v1/ext/notes; scope `items:write`) with an `Idempotency-Key` (yours, or a random
   * one reused by every attempt), so a retry never adds it twice.
   * @param body `item_id` and `body` (Markdown, 1..65,536 characters) required, `pinned` (default false).
   * @returns the created note.
   * @throws ValidationError (400; 422 `invalid_reference` for an item of another company or a deleted one), other
   * StagelineErrors, ConnectionError.
   */
  create(body: NoteCreate, options?: CreateOptions): Promise<Note> {
    const key = idempotencyKeyOf(options);
    return unwrap(this.ctx.keyed((fetch) => this.ctx.api.POST("/v1/ext/notes", { body, params: { header: { "Idempotency-Key": key } }, fetch })));
  }

  /**
   * Changes a note's `body` and/or `pinned` (PATCH /v1/ext/notes/{note_id}); sent once (not retried after network
   * errors or 5xx). A note never moves to another item.
   * @param body at least one of `body`, `pinned`; `version` makes it conditional (409 version_conflict when stale).
   * @returns the updated note.
   * @throws NotFoundError, ValidationError, ConflictError (`currentVersion` set), ServerError, ConnectionError.
   * @throws TypeError (the promise rejects, nothing is sent) when an id is empty or blank.
   */
  async update(id: string, body: NoteUpdate): Promise<Note> {
    const path = { note_id: requireId("id", id) };
    return unwrap(this.ctx.unkeyed((fetch) => this.ctx.api.PATCH("/v1/ext/notes/{note_id}", { params: { path }, body, fetch })));
  }

  /**
   * Deletes a note for good (DELETE /v1/ext/notes/{note_id}; CONTRACT "Notes": its body is erased in the service,
   * subscribers get `note.deleted`). Sent once: not retried after a network error or 5xx (a repeat would be a 404 if
   * the first one went through); a 429 is still waited out.
   * @param options `version` makes it conditional (409 version_conflict when stale).
   * @throws NotFoundError (unknown, another company's, or already deleted), ConflictError (`currentVersion` set),
   * ValidationError, ServerError, ConnectionError.
   * @throws TypeError (the promise rejects, nothing is sent) when an id is empty or blank.
   */
  async delete(id: string, options: NoteDeleteOptions = {}): Promise<void> {
    const path = { note_id: requireId("id", id) };
    const query: NoteDeleteOptions = options.version === undefined ? {} : { version: options.version };
    await unwrap(this.ctx.unkeyed((fetch) => this.ctx.api.DELETE("/v1/ext/notes/{note_id}", { params: { path, query }, fetch })));
  }
}

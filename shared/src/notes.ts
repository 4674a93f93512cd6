import { z } from "zod";
import { AT_LEAST_ONE_FIELD_MESSAGE, booleanField, dateTimeField, hasAnyField, idField, strictBody, wholeNumberField } from "./fields";
import { INT_MAX } from "./limits";
import { CursorSchema, LimitSchema } from "./pagination";
import { NUL_FREE_PATTERN, integerQueryParam, nulFreeMessage, queryParam, queryParams } from "./query-params";

/** CONTRACT "Notes": a note body is 1..65,536 characters (HubSpot's note limit). */
export const NOTE_BODY_MAX = 65536;

const timestamp = z.iso.datetime({ offset: true });

/**
 * CONTRACT "Notes": a note body, Markdown text of 1..65,536 characters without U+0000. Leading and trailing white
 * space is kept as written (Markdown is sensitive to it); a body of only white space is refused.
 */
export function noteBodyField(field = "body") {
  return z
    .string({ error: `${field} must be text.` })
    .min(1, { error: `${field} must not be empty.` })
    .max(NOTE_BODY_MAX, { error: `${field} must be at most ${NOTE_BODY_MAX} characters.` })
    .regex(NUL_FREE_PATTERN, { error: nulFreeMessage(field) })
    .refine((value) => value.trim().length > 0, { error: `${field} must contain more than white space.` });
}

/**
 * CONTRACT "Notes": a note as returned by GET /v1/ext/notes (array), GET /v1/ext/notes/{note_id}, create (201),
 * update (200) and the note event payloads. `created_by` is the creating API key's id, or the console user's id when
 * written in the console. `version` starts at 1 and grows by one on every change (optimistic locking, as for items).
 */
export const NoteSchema = z.object({
  note_id: z.string(),
  item_id: z.string(),
  body: z.string(),
  pinned: z.boolean(),
  created_by: z.string(),
  created_at: timestamp,
  updated_at: timestamp,
  version: z.number().int().min(1),
});
/** A note as returned by the API. */
export type Note = z.infer<typeof NoteSchema>;

/**
 * CONTRACT "Notes": body of POST /v1/ext/notes. `item_id` (an item of the caller's company, else `422
 * invalid_reference`) and `body` are required, `pinned` defaults to false. Unknown fields are a 400.
 */
export const NoteCreateSchema = strictBody({
  item_id: idField("item_id"),
  body: noteBodyField(),
  pinned: booleanField("pinned").optional(),
});
/** Body of POST /v1/ext/notes. */
export type NoteCreate = z.infer<typeof NoteCreateSchema>;

/**
 * CONTRACT "Notes": body of PATCH /v1/ext/notes/{note_id}: `body` and/or `pinned`, and optionally `version` (the
 * expected current version; a mismatch is `409 version_conflict` with `current_version`). A note's `item_id` never
 * changes (naming it is a 400 as any unknown field). At least one of `body` and `pinned`.
 */
export const NoteUpdateSchema = strictBody({
  body: noteBodyField().optional(),
  pinned: booleanField("pinned").optional(),
  version: wholeNumberField("version", 1).optional(),
})
  .refine((value) => hasAnyField({ body: value.body, pinned: value.pinned }), { error: AT_LEAST_ONE_FIELD_MESSAGE })
  .meta({ minProperties: 1 });
/** Body of PATCH /v1/ext/notes/{note_id}. */
export type NoteUpdate = z.infer<typeof NoteUpdateSchema>;

/**
 * CONTRACT "Notes" + "Lists": the filters of GET /v1/ext/notes as plain fields: `item_id`, `pinned` ("true"/"false"
 * in the query), `updated_after` (ISO 8601 with a time zone, strictly after). Combined with AND.
 */
export const noteListFilters = {
  item_id: idField("item_id").optional(),
  updated_after: dateTimeField("updated_after").optional(),
};

/** The notes list query: `noteListFilters`, `pinned` ("true"/"false"), `limit`, `cursor`. Newest first. */
export const NoteListQuerySchema = z.object({
  ...queryParams(noteListFilters),
  pinned: queryParam(
    z
      .enum(["true", "false"], { error: 'pinned must be "true" or "false".' })
      .transform((v) => v === "true")
      .optional(),
  ),
  limit: LimitSchema,
  cursor: CursorSchema,
});
/** Parsed query of GET /v1/ext/notes. */
export type NoteListQuery = z.infer<typeof NoteListQuerySchema>;

/**
 * CONTRACT "Notes": query of DELETE /v1/ext/notes/{note_id}. `version` (optional) is the expected current version, as
 * in PATCH: a mismatch is `409 version_conflict` with `current_version`. The request has no body.
 */
export const NoteDeleteQuerySchema = z.object({
  version: integerQueryParam(
    z
      .number({ error: "version must be a whole number from 1 upward." })
      .int({ error: "version must be a whole number from 1 upward." })
      .min(1, { error: "version must be a whole number from 1 upward." })
      .max(INT_MAX, { error: "version is too large." })
      .optional(),
  ),
});
/** Parsed query of DELETE /v1/ext/notes/{note_id}. */
export type NoteDeleteQuery = z.infer<typeof NoteDeleteQuerySchema>;

/** CONTRACT "Previous values in update events": the note fields `changed_fields` of `note.updated` can name. */
export const NOTE_CHANGE_FIELDS = ["body", "pinned"] as const;
/** A note field name of `changed_fields`. */
export type NoteChangeField = (typeof NOTE_CHANGE_FIELDS)[number];

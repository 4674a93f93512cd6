/**
 * Create `create_note` ("Create Note"): POST /v1/ext/notes (CONTRACT "Notes": `item_id` and `body` required, `pinned`
 * optional; 201 with the full Note; takes `Idempotency-Key`). The item is chosen with the item picker (or mapped).
 */
import { defineCreate, type Bundle, type ZObject } from 'zapier-platform-core';
import { NoteCreateSchema, type Note } from '@stageline/shared';
import { apiPath, createJson } from '../client';
import { checkedBody, toId } from '../fields/coerce';
import { NOTE_OUTPUT_FIELDS, NOTE_SAMPLE, noteBodyFrom, noteInputFields, withNoteId, type ZapierNote } from '../fields/note-fields';
import { itemInputField } from '../fields/pickers';
import { idempotencyKeyFor, idempotencyKeyInputField } from '../idempotency';

/** The operation key; also part of the Idempotency-Key derivation (idempotency.ts). */
export const CREATE_NOTE_KEY = 'create_note';

/**
 * Adds the note from coerced input checked with NoteCreateSchema, with an Idempotency-Key derived from the Zap, this
 * action, the body and the optional override (idempotency.ts); returns it with `id` = `note_id`.
 * Errors: InvalidData (checked locally: no item, empty body, over 65,536 characters), 4xx via middleware.ts (an item
 * that is not this company's is a 422 `invalid_reference`).
 */
export async function perform(z: ZObject, bundle: Bundle): Promise<ZapierNote> {
  const fields = noteBodyFrom(bundle.inputData);
  // a blank or missing body is sent to the check as '' so the message says "body must not be empty"
  const body = checkedBody(NoteCreateSchema, { item_id: toId(bundle.inputData.item_id, 'Item'), ...fields, body: fields.body ?? '' }, 'note');
  const key = idempotencyKeyFor(bundle, CREATE_NOTE_KEY, body);
  return withNoteId(await createJson<Note>(z, apiPath('notes'), body, key));
}

export default defineCreate({
  key: CREATE_NOTE_KEY,
  noun: 'Note',
  display: {
    label: 'Create Note',
    description: 'Adds a note (Markdown text) to an item in Stageline, optionally pinned to the top.',
  },
  operation: {
    inputFields: [
      itemInputField({
        required: true,
        helpText: 'The item the note is about: choose it by short ID and name, or map the Item ID from a Stageline step (e.g. Find Item).',
      }),
      ...noteInputFields('create'),
      idempotencyKeyInputField,
    ],
    perform,
    sample: NOTE_SAMPLE,
    outputFields: NOTE_OUTPUT_FIELDS,
  },
});

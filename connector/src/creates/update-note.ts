/**
 * Create `update_note` ("Update Note"): PATCH /v1/ext/notes/{note_id} with only the provided fields (CONTRACT "Notes":
 * `body`, `pinned`, optional `version` for optimistic locking as for items; a note never moves to another item; 200
 * with the full Note, 409 `version_conflict` with `current_version`).
 */
import { defineCreate, type Bundle, type ZObject } from 'zapier-platform-core';
import { NoteUpdateSchema, type Note } from '@stageline/shared';
import { apiPath, sendJson } from '../client';
import { checkedBody, definedOnly, requireId } from '../fields/coerce';
import {
  NOTE_OUTPUT_FIELDS,
  NOTE_SAMPLE,
  NOTE_VERSION_INPUT_FIELD,
  noteBodyFrom,
  noteInputFields,
  noteVersionFrom,
  withNoteId,
  type ZapierNote,
} from '../fields/note-fields';
import { itemInputField, noteInputField } from '../fields/pickers';

/**
 * Updates the note `note_id` with the provided fields (checked with NoteUpdateSchema: at least Body or Pinned);
 * returns it with `id`. The Item input only narrows the Note dropdown and is never sent.
 * Errors: InvalidData (checked locally), 404 / 409 / 422 via middleware.ts.
 */
export async function perform(z: ZObject, bundle: Bundle): Promise<ZapierNote> {
  const noteId = requireId(bundle.inputData.note_id, 'Note');
  const body = checkedBody(NoteUpdateSchema, definedOnly({ ...noteBodyFrom(bundle.inputData), version: noteVersionFrom(bundle.inputData) }), 'note update');
  return withNoteId(await sendJson<Note>(z, 'PATCH', apiPath('notes', noteId), body));
}

export default defineCreate({
  key: 'update_note',
  noun: 'Note',
  display: {
    label: 'Update Note',
    description: 'Updates a note in Stageline: rewrites its text, or pins or unpins it. Only the fields you fill in change.',
  },
  operation: {
    inputFields: [
      {
        ...itemInputField({
          required: false,
          searchable: false,
          helpText: "Optional: the note's item, to list only its notes in the Note dropdown below. It is not changed (a note stays on its item).",
        }),
        altersDynamicFields: true,
      },
      noteInputField({
        required: true,
        helpText: 'The note to update: choose it from the list (the start of its text), or map the Note ID from a Stageline step.',
      }),
      ...noteInputFields('update'),
      NOTE_VERSION_INPUT_FIELD,
    ],
    perform,
    sample: NOTE_SAMPLE,
    outputFields: NOTE_OUTPUT_FIELDS,
  },
});

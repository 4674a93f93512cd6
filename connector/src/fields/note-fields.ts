/**
 * Note fields (CONTRACT "Notes": `{ note_id, item_id, body, pinned, created_by, created_at, updated_at, version }`):
 * Zapier input fields of Create Note and Update Note, output fields, a realistic sample, and the mapping of Zapier
 * input to a note write body (checked by the caller with NoteCreateSchema / NoteUpdateSchema).
 */
import type { PlainInputField, PlainOutputField } from 'zapier-platform-core';
import { NOTE_BODY_MAX, NoteSchema, type Note } from '@stageline/shared';
import { definedOnly, toBoolean, toInteger } from './coerce';

/** Whether the form creates a note (body required) or updates one (everything optional). */
export type NoteFieldMode = 'create' | 'update';

/** Body and Pinned as Zapier input fields (the item and the note pickers are the steps' own). */
export function noteInputFields(mode: NoteFieldMode): PlainInputField[] {
  const keep = mode === 'update' ? ' Leave empty to keep the current text.' : '';
  return [
    {
      key: 'body',
      label: 'Body',
      type: 'text',
      required: mode === 'create',
      helpText: `The note, as Markdown text (\`**bold**\`, lists, links; raw HTML is shown as text). Up to ${NOTE_BODY_MAX.toLocaleString('en-US')} characters.${keep}`,
    },
    {
      key: 'pinned',
      label: 'Pinned',
      type: 'boolean',
      required: false,
      helpText:
        mode === 'create'
          ? 'Pin the note to the top of the item (yes), or not (no, the default).'
          : 'Yes pins the note to the top of its item; no unpins it. Leave empty to keep it as it is.',
    },
  ];
}

/**
 * The note write fields from Zapier input: `body` as written (Markdown keeps its white space; a blank body counts as
 * "not provided"), `pinned` coerced from yes/no/true/false. Blank values are left out, so an update only sends what
 * was provided.
 */
export function noteBodyFrom(inputData: Readonly<Record<string, unknown>>): { body?: string; pinned?: boolean } {
  const raw = inputData.body;
  const body = typeof raw === 'string' ? (raw.trim() === '' ? undefined : raw) : raw === undefined || raw === null ? undefined : String(raw);
  return definedOnly({ body, pinned: toBoolean(inputData.pinned, 'Pinned') });
}

/** The optional Version input of Update Note (optimistic locking, as Update Item's). */
export const NOTE_VERSION_INPUT_FIELD: PlainInputField = {
  key: 'version',
  label: 'Version',
  type: 'integer',
  required: false,
  helpText:
    "Optimistic locking: map the note's Version from the step that read it. If someone changed the note since, Stageline refuses the update instead of overwriting their change. Leave empty to update regardless.",
};

/** The Version from the step's input, or undefined when blank. @throws an input error when it is not a whole number. */
export function noteVersionFrom(inputData: Readonly<Record<string, unknown>>): number | undefined {
  return toInteger(inputData.version, 'Version');
}

/** Label and type of every Note field; typed over the contract's Note, so a field added there must be labelled here. */
export const NOTE_FIELD_LABELS: { [K in keyof Note]-?: Pick<PlainOutputField, 'label' | 'type'> } = {
  note_id: { label: 'Note ID', type: 'string' },
  item_id: { label: 'Item ID', type: 'string' },
  body: { label: 'Body (Markdown)', type: 'string' },
  pinned: { label: 'Pinned', type: 'boolean' },
  created_by: { label: 'Created By (API Key or User ID)', type: 'string' },
  created_at: { label: 'Created At', type: 'datetime' },
  updated_at: { label: 'Updated At', type: 'datetime' },
  version: { label: 'Version', type: 'integer' },
};

/** Output fields of note steps: Zapier's `id`, then the Note fields in the order of the contract's NoteSchema. */
export const NOTE_OUTPUT_FIELDS: PlainOutputField[] = [
  { key: 'id', label: 'ID (same as Note ID)', type: 'string' },
  ...(Object.keys(NoteSchema.shape) as (keyof Note)[]).map((key) => ({ key, ...NOTE_FIELD_LABELS[key] })),
];

/** A Note with Zapier's `id` (= `note_id`). */
export type ZapierNote = Note & { id: string };

/** Adds `id` = `note_id` (Zapier de-duplicates on it: a note is created once). */
export function withNoteId(note: Note): ZapierNote {
  return { id: note.note_id, ...note };
}

/** A realistic note on the sample item (ITEM_SAMPLE), written through an API key. */
export const NOTE_SAMPLE: ZapierNote = {
  id: 'c3d5e7f9-2a4b-4c6d-8e0f-1a2b3c4d5e6f',
  note_id: 'c3d5e7f9-2a4b-4c6d-8e0f-1a2b3c4d5e6f',
  item_id: '5f0c6a53-8a2e-4b7e-9a51-2f1d0e6c4b11',
  body: 'Call with Ada: wants **annual billing** for 50 seats.\n\n- send the proposal by Friday\n- loop in finance',
  pinned: false,
  created_by: '7d9f1b3c-5e7a-4c9e-b1d3-f5a7c9e1b3d5',
  created_at: '2026-03-02T10:15:00.000Z',
  updated_at: '2026-03-02T10:15:00.000Z',
  version: 1,
};

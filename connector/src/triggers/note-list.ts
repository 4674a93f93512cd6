/**
 * Hidden trigger `note_list`: the note picker behind the Note input of Update Note (`dynamic: 'note_list.id.label'`).
 * CONTRACT "Notes": GET /v1/ext/notes, newest first, filtered by the step's chosen Item when there is one (`item_id`);
 * Zapier pages through it with `canPaginate` over the API's keyset cursor (client.ts `getPickerPage`). Notes have no
 * title, so each choice is labelled with the start of its first non-empty line (Markdown markers left as written),
 * and "(pinned)" when pinned.
 */
import { defineTrigger, type Bundle, type ZObject } from 'zapier-platform-core';
import type { Note } from '@stageline/shared';
import { apiPath, getPickerPage } from '../client';
import { chosenId } from '../fields/coerce';

/** The most characters of a note's first line a choice shows. */
export const NOTE_LABEL_MAX = 80;

/** One choice of the note picker. */
export interface NoteChoice {
  /** The note id (what the dropdown puts into the field). */
  id: string;
  /** What the dropdown shows: the start of the note, and "(pinned)". */
  label: string;
  item_id: string;
  pinned: boolean;
  updated_at: string;
}

/** The first non-empty line of `body`, cut to NOTE_LABEL_MAX characters (with "…" when cut). */
export function noteExcerpt(body: string): string {
  const line = body.split(/\r?\n/).map((l) => l.trim()).find((l) => l !== '') ?? '';
  const chars = Array.from(line); // never split a surrogate pair
  return chars.length > NOTE_LABEL_MAX ? `${chars.slice(0, NOTE_LABEL_MAX - 1).join('')}…` : line;
}

/** A note as a picker choice. */
export function noteChoice(note: Note): NoteChoice {
  const pinned = note.pinned ? ' (pinned)' : '';
  return { id: note.note_id, label: `${noteExcerpt(note.body)}${pinned}`, item_id: note.item_id, pinned: note.pinned, updated_at: note.updated_at };
}

/** One page (bundle.meta.page) of the company's notes, newest first, of the chosen item if any. */
export async function listNoteChoices(z: ZObject, bundle: Bundle): Promise<NoteChoice[]> {
  const itemId = chosenId(bundle.inputData?.item_id);
  const notes = await getPickerPage<Note>(z, bundle, apiPath('notes'), { item_id: itemId });
  return notes.map(noteChoice);
}

export default defineTrigger({
  key: 'note_list',
  noun: 'Note',
  display: {
    label: 'List Notes',
    description: 'Lists notes, newest first, for the note dropdowns.',
    hidden: true,
  },
  operation: {
    type: 'polling',
    canPaginate: true,
    perform: listNoteChoices,
    sample: {
      id: 'c3d5e7f9-2a4b-4c6d-8e0f-1a2b3c4d5e6f',
      label: 'Call with Ada: wants **annual billing** for 50 seats.',
      item_id: '5f0c6a53-8a2e-4b7e-9a51-2f1d0e6c4b11',
      pinned: false,
      updated_at: '2026-03-02T10:15:00.000Z',
    },
    outputFields: [
      { key: 'id', label: 'Note ID', type: 'string' },
      { key: 'label', label: 'Start of the Note', type: 'string' },
      { key: 'item_id', label: 'Item ID', type: 'string' },
      { key: 'pinned', label: 'Pinned', type: 'boolean' },
      { key: 'updated_at', label: 'Updated At', type: 'datetime' },
    ],
  },
});

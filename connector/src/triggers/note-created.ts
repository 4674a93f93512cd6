/**
 * Trigger `note_created` ("New Note"): a REST hook on the `note.created` event (CONTRACT "Notes", "Events and
 * deliveries"; plumbing in rest-hook.ts). The body is the note in the Note format. Output `id` = `note_id` (a note is
 * created once). An optional Pipeline becomes the subscription's filter (hook-filter.ts): only notes on items of that
 * pipeline are sent (a note carries no pipeline, so the server alone applies it).
 */
import { defineTrigger } from 'zapier-platform-core';
import type { EventName } from '@stageline/shared';
import { hookFilterInputFields } from '../fields/hook-filter-fields';
import { NOTE_OUTPUT_FIELDS, NOTE_SAMPLE, withNoteId } from '../fields/note-fields';
import { restHookOperations } from './rest-hook';

/** The event this trigger subscribes to. */
export const NOTE_CREATED_EVENT = 'note.created' satisfies EventName;

/**
 * The hook functions: subscribe/unsubscribe `note.created`; `perform` maps a delivered note to `{id: note_id, ...}`;
 * `performList` shows the newest `note.created` events of the feed (of the chosen pipeline) the same way, else the
 * sample note (GET /v1/ext/webhooks/sample/notes).
 */
export const { performSubscribe, performUnsubscribe, perform, performList } = restHookOperations(NOTE_CREATED_EVENT, {
  toOutput: withNoteId,
});

export default defineTrigger({
  key: 'note_created',
  noun: 'Note',
  display: {
    label: 'New Note',
    description: 'Triggers when a note is added to an item in Stageline (instantly, through a REST hook), by any app or person.',
  },
  operation: {
    type: 'hook',
    inputFields: hookFilterInputFields(NOTE_CREATED_EVENT, {
      pipeline: 'Only trigger for notes on items of this pipeline. Leave empty for every note.',
    }),
    performSubscribe,
    performUnsubscribe,
    perform,
    performList,
    sample: NOTE_SAMPLE,
    outputFields: NOTE_OUTPUT_FIELDS,
  },
});

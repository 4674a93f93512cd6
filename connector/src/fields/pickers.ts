/**
 * The Item, Task, Note and Assigned To inputs of every step as dynamic dropdowns over the paged picker triggers
 * (`item_list`, `task_list`, `note_list`, `user_list`), so users choose an item by its short ID and name, or a
 * teammate by name, instead of pasting an ID. Users can still map an ID from an earlier step or type a custom value
 * (Zapier lets mapped and custom values replace a dropdown choice). With `search`, the Zap editor also offers to add a
 * Find Item / Find Task step that fills the input.
 */
import type { PlainInputField } from 'zapier-platform-core';

/** Options of a picker input. */
export interface PickerOptions {
  required: boolean;
  helpText: string;
  /** Shown label; default "Item" / "Task". */
  label?: string;
  /** Offer a search step that fills the input (off for the search's own input). Default true. */
  searchable?: boolean;
}

/** A picker input: `key` as a dropdown of the hidden trigger `trigger` (choices labelled by its `label`). */
function pickerField(key: string, trigger: string, search: string | undefined, defaultLabel: string, options: PickerOptions): PlainInputField {
  const field: PlainInputField = {
    key,
    label: options.label ?? defaultLabel,
    type: 'string',
    required: options.required,
    dynamic: `${trigger}.id.label`,
    helpText: options.helpText,
  };
  if (search !== undefined && (options.searchable ?? true)) field.search = `${search}.id`;
  return field;
}

/** The `item_id` input as a dropdown of items labelled "SHORT-ID name" (hidden trigger `item_list`; search `find_item`). */
export function itemInputField(options: PickerOptions): PlainInputField {
  return pickerField('item_id', 'item_list', 'find_item', 'Item', options);
}

/** The `task_id` input as a dropdown of tasks labelled title, due date, assignee (`task_list`; search `find_task`). */
export function taskInputField(options: PickerOptions): PlainInputField {
  return pickerField('task_id', 'task_list', 'find_task', 'Task', options);
}

/**
 * The `note_id` input as a dropdown of notes labelled with their first line (`note_list`; no search step, there is
 * no Find Note). The list follows the step's chosen Item (`item_id`) when the step has one.
 */
export function noteInputField(options: Omit<PickerOptions, 'searchable'>): PlainInputField {
  return pickerField('note_id', 'note_list', undefined, 'Note', options);
}

/**
 * The `assigned_to` input as a dropdown of the company's users labelled "Name (email)" (`user_list`; the value is the
 * `user_id`, CONTRACT "People"). A custom value (any identifier, e.g. an email address) is still accepted, as the API's
 * `assigned_to` is; `helpText` should say so.
 */
export function assigneeInputField(options: Omit<PickerOptions, 'searchable'>): PlainInputField {
  return pickerField('assigned_to', 'user_list', undefined, 'Assigned To', options);
}

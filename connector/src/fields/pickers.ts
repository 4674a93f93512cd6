/**
 * The Item and Task inputs of every step as dynamic dropdowns over the paged picker triggers (`item_list`,
 * `task_list`), so users choose an item by its short ID and name instead of pasting an ID. Users can still map an
 * ID from an earlier step (Zapier lets mapped values replace a dropdown choice). With `search`, the Zap editor also
 * offers to add a Find Item / Find Task step that fills the input.
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
function pickerField(key: string, trigger: string, search: string, defaultLabel: string, options: PickerOptions): PlainInputField {
  const field: PlainInputField = {
    key,
    label: options.label ?? defaultLabel,
    type: 'string',
    required: options.required,
    dynamic: `${trigger}.id.label`,
    helpText: options.helpText,
  };
  if (options.searchable ?? true) field.search = `${search}.id`;
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

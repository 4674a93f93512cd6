/**
 * The Item and Task inputs of every step as dynamic dropdowns over the paged picker triggers (`item_list`,
 * `task_list`), so users choose an item by its short ID and name instead of pasting an ID. Users can still map an
 * ID from an earlier step (Zapier lets mapped values replace a dropdown choice).
 */
import type { PlainInputField } from 'zapier-platform-core';

/** Options of a picker input. */
export interface PickerOptions {
  required: boolean;
  helpText: string;
  /** Shown label; default "Item" / "Task". */
  label?: string;
}

/** The `item_id` input as a dropdown of items labelled "SHORT-ID name" (hidden trigger `item_list`). */
export function itemInputField(options: PickerOptions): PlainInputField {
  return {
    key: 'item_id',
    label: options.label ?? 'Item',
    type: 'string',
    required: options.required,
    dynamic: 'item_list.id.label',
    helpText: options.helpText,
  };
}

/** The `task_id` input as a dropdown of tasks labelled with title, due date and assignee (hidden trigger `task_list`). */
export function taskInputField(options: PickerOptions): PlainInputField {
  return {
    key: 'task_id',
    label: options.label ?? 'Task',
    type: 'string',
    required: options.required,
    dynamic: 'task_list.id.label',
    helpText: options.helpText,
  };
}

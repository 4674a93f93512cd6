/**
 * Previous values in update events (CONTRACT "Previous values in update events"): the delivery bodies of
 * `item.updated` / `item.stage_changed` and `task.updated` / `task.completed`, with `changed_fields` (every changed
 * field) and `previous` (the value of each before the change). One module, so every write path that emits these events
 * (API PATCH today; item deletion's unlinked tasks, upsert) builds them alike.
 *
 * Where the "before" comes from: the caller passes the row it read, and the write stores the change only if the row
 * is still exactly that version (items: `version = expected`, db/items.ts `updateItemWithEvents`; tasks: `xmin`,
 * db/tasks.ts `updateTaskWithEvents`), in the same statement as the events. A concurrent change makes that statement
 * write nothing (the caller reads again and recomputes), so `previous` is always the row the statement replaced: no
 * read-then-write race.
 */
import {
  TASK_CHANGE_FIELDS,
  type Item,
  type ItemChangedEvent,
  type Task,
  type TaskChangedEvent,
} from "@stageline/shared";
import type { ItemRecord } from "../db/item-record";

/**
 * The `item.updated` / `item.stage_changed` body: the item after the change (`after`, Item format) plus
 * `changed_fields` (as given: built-in names of ITEM_CHANGE_FIELDS and custom field keys, in the order found) and
 * `previous`: `stage` and `status` names before the change (always, as before), then the before-value of every other
 * changed field: `name`, `contact_id`, `source` as stored; a custom field as its stored value, `null` when unset.
 * Size: `previous` holds at most one copy of each changed value (bounded by the item's own limits).
 */
export function itemChangedPayload(before: ItemRecord, after: Item, changedFields: readonly string[]): ItemChangedEvent {
  const previous: ItemChangedEvent["previous"] = { stage: before.stage.name, status: before.status.name };
  const metadata = (before.metadata && typeof before.metadata === "object" ? before.metadata : {}) as Record<string, unknown>;
  for (const field of changedFields) {
    if (field === "stage" || field === "status") continue;
    if (field === "name") previous.name = before.name;
    else if (field === "contact_id") previous.contact_id = before.contactId;
    else if (field === "source") previous.source = before.source;
    else previous[field] = metadata[field] ?? null;
  }
  return { ...after, changed_fields: [...changedFields], previous };
}

/**
 * The `task.updated` / `task.completed` body: the task after the change (`after`, Task format) plus `changed_fields`,
 * the TASK_CHANGE_FIELDS whose Task-format value differs between `before` (the task as read, Task format) and `after`
 * (in that list's order; `completed_at` changes with `is_completed`), and `previous`, the Task-format value of each
 * before the change (timestamps as ISO 8601 strings, `null` when unset). `assignee` follows `assigned_to` and is not
 * one of the change fields: `previous.assigned_to` tells what it was.
 * @returns null when no field changed (the caller then writes no event).
 */
export function taskChangedPayload(old: Task, after: Task): TaskChangedEvent | null {
  const changed = TASK_CHANGE_FIELDS.filter((field) => old[field] !== after[field]);
  if (changed.length === 0) return null;
  const previous: Record<string, unknown> = {};
  for (const field of changed) previous[field] = old[field];
  return { ...after, changed_fields: changed, previous };
}

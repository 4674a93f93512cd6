/**
 * The Task format (spec "Task (response)" + CONTRACT "Responses"): one function turns a stored task into the object
 * every task endpoint, task event payload and the task sample return, so they can never drift apart.
 */
import type { Task, TaskPriority, TaskType, User } from "@stageline/shared";
import type { TaskRecord } from "../db/task-record";
import { toIsoTimestamp } from "./iso-timestamp";

/**
 * Formats a task: every field of the spec's Task plus `duration_minutes` and `reminder_minutes` (CONTRACT
 * "Responses"); `description`, `notes`, `item_id`, `completed_at` and the minutes are null when unset.
 * `priority` and `task_type` are stored only through the contract's enums, so they are passed through as such.
 * `assignee` (CONTRACT "People") is the company's user whose id equals `row.assignedTo`, or null: the caller looks it
 * up (one query per page or write, services/user-directory.ts `assigneeLookup`, or a join of the read).
 */
export function toTaskResponse(row: TaskRecord, assignee: User | null): Task {
  return {
    task_id: row.id,
    title: row.title,
    description: row.description,
    due_at: toIsoTimestamp(row.dueAt),
    priority: row.priority as TaskPriority,
    is_completed: row.isCompleted,
    task_type: row.taskType as TaskType,
    assigned_to: row.assignedTo,
    assignee,
    created_by: row.createdBy,
    item_id: row.itemId,
    completed_at: row.completedAt ? toIsoTimestamp(row.completedAt) : null,
    notes: row.notes,
    duration_minutes: row.durationMinutes,
    reminder_minutes: row.reminderMinutes,
    created_at: toIsoTimestamp(row.createdAt),
    updated_at: toIsoTimestamp(row.updatedAt),
  };
}

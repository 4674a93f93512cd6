/**
 * Tasks (spec "Tasks", CONTRACT.md "Tasks", "Responses", "Lists", "Events and deliveries"): list, get, create and
 * update the tasks of one company. Domain rules live here: defaults, the `item_id` reference check, the
 * `completed_at` rules and the outbox events (`task.created`, `task.updated`, `task.completed`) written in the same
 * transaction as the change.
 */
import {
  decodeKeysetCursor,
  resourceLocation,
  type EventName,
  type Task,
  type TaskCreate,
  type TaskListQuery,
  type TaskUpdate,
} from "@stageline/shared";
import type { AppContext } from "../context";
import * as db from "../db/tasks";
import type { Prisma, Task as TaskRow } from "../generated/prisma/client";
import { domainError, notFound } from "./errors";
import { inIdempotentTransaction, type IdempotencyClaim } from "./idempotency";
import { recordEvent } from "../webhooks/outbox";
import { toTaskResponse } from "./task-format";

/** Spec "Task write fields": what a create leaves out gets these values. */
export const TASK_DEFAULTS = { priority: "none", taskType: "to_do" } as const;

/**
 * One page of the company's tasks, newest first, filtered by the query (CONTRACT.md "Lists": `item_id`,
 * `is_completed`, `assigned_to`, `due_before` and `due_after`, the last two exclusive).
 * @returns up to `query.limit + 1` stored rows: the extra row tells `pageWithLink` that a next page exists.
 * @throws DomainError 400 `validation_failed` for a cursor this API did not issue.
 */
export function listTasks(ctx: AppContext, companyId: string, query: TaskListQuery): Promise<TaskRow[]> {
  const after = query.cursor ? decodeKeysetCursor(query.cursor) : undefined;
  const filters: db.TaskFilters = {
    itemId: query.item_id,
    isCompleted: query.is_completed,
    assignedTo: query.assigned_to,
    dueBefore: query.due_before ? new Date(query.due_before) : undefined,
    dueAfter: query.due_after ? new Date(query.due_after) : undefined,
  };
  return db.listTasks(ctx.prisma, companyId, filters, after, query.limit + 1);
}

/**
 * One task of the company in the Task format (CONTRACT.md "Responses": GET /v1/ext/tasks/{task_id}).
 * @throws DomainError 404 `not_found` when the task does not exist or belongs to another company.
 */
export async function getTask(ctx: AppContext, companyId: string, taskId: string): Promise<Task> {
  const row = await db.findTask(ctx.prisma, companyId, taskId);
  if (!row) throw notFound("Task", taskId);
  return toTaskResponse(row);
}

/**
 * Creates a task (spec "Tasks", CONTRACT.md "Responses" and "Tasks"): `created_by` is the creating API key's id,
 * `priority` defaults to `none` and `task_type` to `to_do`; `is_completed: true` sets `completed_at` to now.
 * Records `task.created` (and `task.completed` when created completed) in the same transaction, then wakes the
 * dispatcher.
 * With an idempotency `claim` (CONTRACT "Idempotency") the transaction first takes the key and last stores the 201
 * response under it (services/idempotency.ts `inIdempotentTransaction`).
 * @returns the stored task in the Task format.
 * @throws DomainError 422 `invalid_reference` when `item_id` is not an item of the company; with a claim,
 *   StoredResponseFound or 409 `idempotency_key_in_use` (nothing is written then).
 */
export async function createTask(
  ctx: AppContext,
  companyId: string,
  apiKeyId: string,
  input: TaskCreate,
  claim?: IdempotencyClaim,
): Promise<Task> {
  const now = new Date();
  const isCompleted = input.is_completed ?? false;
  const respond = (created: Task) => ({ status: 201, body: JSON.stringify(created), location: resourceLocation("tasks", created.task_id) });
  const task = await inIdempotentTransaction(ctx.prisma, claim, async (tx) => {
    if (input.item_id) await assertItemOfCompany(tx, companyId, input.item_id);
    const row = await db.insertTask(tx, {
      companyId,
      title: input.title,
      description: blankToNull(input.description),
      dueAt: new Date(input.due_at),
      priority: input.priority ?? TASK_DEFAULTS.priority,
      taskType: input.task_type ?? TASK_DEFAULTS.taskType,
      assignedTo: input.assigned_to,
      createdBy: apiKeyId,
      itemId: input.item_id ?? null,
      isCompleted,
      completedAt: isCompleted ? now : null,
      notes: blankToNull(input.notes),
      durationMinutes: input.duration_minutes ?? null,
      reminderMinutes: input.reminder_minutes ?? null,
      createdAt: now,
      updatedAt: now,
    });
    const created = toTaskResponse(row);
    await recordTaskEvents(tx, companyId, created, isCompleted ? ["task.created", "task.completed"] : ["task.created"]);
    return created;
  }, respond);
  ctx.eventsCommitted();
  return task;
}

/**
 * Updates a task with the fields given (spec "Tasks": PATCH carries only the fields to change; CONTRACT.md "Tasks"):
 * `is_completed: true` sets `completed_at` to now unless the task was already completed (the original time is
 * kept), `false` clears it; `null` clears `description`, `notes`, `item_id` and the minutes. Concurrent updates of
 * one task are serialised. When something actually changed it records `task.updated`, plus `task.completed` when
 * the task went from open to completed, in the same transaction; an update that changes nothing writes nothing.
 * @returns the task after the update, in the Task format.
 * @throws DomainError 404 `not_found` (unknown task or another company's); 422 `invalid_reference` (`item_id`).
 */
export async function updateTask(ctx: AppContext, companyId: string, taskId: string, input: TaskUpdate): Promise<Task> {
  const now = new Date();
  const { task, changed } = await ctx.prisma.$transaction(async (tx) => {
    const current = await db.lockTask(tx, companyId, taskId);
    if (!current) throw notFound("Task", taskId);
    const changes = taskChanges(current, input, now);
    if (Object.keys(changes).length === 0) return { task: toTaskResponse(current), changed: false };
    if (changes.itemId) await assertItemOfCompany(tx, companyId, changes.itemId);
    const row = await db.updateTask(tx, taskId, { ...changes, updatedAt: now });
    const updated = toTaskResponse(row);
    const completedNow = !current.isCompleted && row.isCompleted;
    await recordTaskEvents(tx, companyId, updated, completedNow ? ["task.updated", "task.completed"] : ["task.updated"]);
    return { task: updated, changed: true };
  });
  if (changed) ctx.eventsCommitted();
  return task;
}

/** The columns whose value `input` actually changes (an empty object when nothing changes). */
function taskChanges(current: TaskRow, input: TaskUpdate, now: Date): db.TaskChanges {
  const changes: db.TaskChanges = {};
  if (input.title !== undefined && input.title !== current.title) changes.title = input.title;
  if (input.description !== undefined && blankToNull(input.description) !== current.description) {
    changes.description = blankToNull(input.description);
  }
  if (input.due_at !== undefined) {
    const dueAt = new Date(input.due_at);
    if (dueAt.getTime() !== current.dueAt.getTime()) changes.dueAt = dueAt;
  }
  if (input.assigned_to !== undefined && input.assigned_to !== current.assignedTo) changes.assignedTo = input.assigned_to;
  if (input.priority !== undefined && input.priority !== current.priority) changes.priority = input.priority;
  if (input.task_type !== undefined && input.task_type !== current.taskType) changes.taskType = input.task_type;
  if (input.item_id !== undefined && input.item_id !== current.itemId) changes.itemId = input.item_id;
  if (input.duration_minutes !== undefined && input.duration_minutes !== current.durationMinutes) {
    changes.durationMinutes = input.duration_minutes;
  }
  if (input.reminder_minutes !== undefined && input.reminder_minutes !== current.reminderMinutes) {
    changes.reminderMinutes = input.reminder_minutes;
  }
  if (input.notes !== undefined && blankToNull(input.notes) !== current.notes) changes.notes = blankToNull(input.notes);
  if (input.is_completed === true && !current.isCompleted) {
    changes.isCompleted = true;
    changes.completedAt = now;
  } else if (input.is_completed === false && current.isCompleted) {
    changes.isCompleted = false;
    changes.completedAt = null;
  }
  return changes;
}

/** CONTRACT.md "Tasks": `item_id` must name an item of the same company (422 otherwise). */
async function assertItemOfCompany(tx: Prisma.TransactionClient, companyId: string, itemId: string): Promise<void> {
  if (await db.itemBelongsToCompany(tx, companyId, itemId)) return;
  const message = `item_id ${itemId} is not an item of this company. Use the item_id of an existing item (GET /v1/ext/items).`;
  throw domainError("invalid_reference", message, { errors: [{ path: "item_id", message }] });
}

/** Writes the task's events to the outbox, in order, with the task format as payload. */
async function recordTaskEvents(tx: Prisma.TransactionClient, companyId: string, task: Task, types: EventName[]): Promise<void> {
  for (const type of types) {
    await recordEvent(tx, { companyId, type, resourceId: task.task_id, payload: task });
  }
}

/** Optional free text: an empty string means "no text", stored as null like an absent value. */
function blankToNull(value: string | null | undefined): string | null {
  return value === undefined || value === "" ? null : value;
}

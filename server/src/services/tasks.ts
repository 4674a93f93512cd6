/**
 * Tasks (spec "Tasks", CONTRACT.md "Tasks", "Responses", "Lists", "Events and deliveries"): list, get, create and
 * update the tasks of one company. Domain rules live here: defaults, the `item_id` reference check's answer, the
 * `completed_at` rules, which outbox events (`task.created`, `task.updated`, `task.completed`) a change writes and
 * their payload (the Task format). Each create and update is written, with its events, in ONE atomic statement
 * (db/tasks.ts), as items are.
 */
import {
  decodeKeysetCursor,
  resourceLocation,
  type EventName,
  type KeysetPosition,
  type Task,
  type TaskChangedEvent,
  type TaskCreate,
  type TaskListQuery,
  type TaskUpdate,
  type User,
} from "@stageline/shared";
import type { AppContext } from "../context";
import * as db from "../db/tasks";
import type { OutboxEventToInsert } from "../db/outbox";
import type { TaskRecord } from "../db/task-record";
import { uuidv7 } from "../db/webhook-dispatch";
import { unknownApiKey } from "./api-keys";
import { domainError, notFound, type DomainError } from "./errors";
import { keyInUse, StoredResponseFound, type IdempotencyClaim } from "./idempotency";
import { taskChangedPayload } from "./previous-values";
import { toTaskResponse } from "./task-format";
import { assigneeLookup, toUser } from "./user-directory";

/** Spec "Task write fields": what a create leaves out gets these values. */
export const TASK_DEFAULTS = { priority: "none", taskType: "to_do" } as const;

/** A listed task in the Task format, with its place in the keyset order (for the next-page cursor). */
export interface ListedTask extends KeysetPosition {
  task: Task;
}

/**
 * One page of the company's tasks, newest first, filtered by the query (CONTRACT.md "Lists": `item_id`,
 * `is_completed`, `assigned_to`, `due_before` and `due_after`, the last two exclusive), each with its `assignee`
 * (CONTRACT "People"; one lookup for the whole page).
 * @returns up to `query.limit + 1` tasks: the extra one tells `pageWithLink` that a next page exists.
 * @throws DomainError 400 `validation_failed` for a cursor this API did not issue.
 */
export async function listTasks(ctx: AppContext, companyId: string, query: TaskListQuery): Promise<ListedTask[]> {
  const after = query.cursor ? decodeKeysetCursor(query.cursor) : undefined;
  const filters: db.TaskFilters = {
    itemId: query.item_id,
    isCompleted: query.is_completed,
    assignedTo: query.assigned_to,
    dueBefore: query.due_before ? new Date(query.due_before) : undefined,
    dueAfter: query.due_after ? new Date(query.due_after) : undefined,
  };
  const rows = await db.listTasks(ctx.prisma, companyId, filters, after, query.limit + 1);
  return withAssignees(ctx, companyId, rows);
}

/**
 * The stored task rows `rows` of company `companyId` in the Task format, each with its `assignee`, looked up in ONE
 * query for all of them (services/user-directory.ts `assigneeLookup`).
 */
export async function withAssignees(ctx: AppContext, companyId: string, rows: readonly TaskRecord[]): Promise<ListedTask[]> {
  const assigneeOf = await assigneeLookup(ctx.prisma, companyId, rows.map((row) => row.assignedTo));
  return rows.map((row) => ({ createdAt: row.createdAt, id: row.id, task: toTaskResponse(row, assigneeOf(row.assignedTo)) }));
}

/** The `assignee` of a task assigned to `assignedTo`: the company's user with that id, or null (one query). */
async function assigneeById(ctx: AppContext, companyId: string, assignedTo: string): Promise<User | null> {
  return (await assigneeLookup(ctx.prisma, companyId, [assignedTo]))(assignedTo);
}

/** A stored task (read with its assignee joined) in the Task format. */
function storedTaskResponse(task: db.StoredTask): Task {
  return toTaskResponse(task, task.assignee && toUser(task.assignee));
}

/**
 * One task of the company in the Task format (CONTRACT.md "Responses": GET /v1/ext/tasks/{task_id}).
 * @throws DomainError 404 `not_found` when the task does not exist or belongs to another company.
 */
export async function getTask(ctx: AppContext, companyId: string, taskId: string): Promise<Task> {
  const { task } = await db.readTask(ctx.prisma, companyId, taskId);
  if (!task) throw notFound("Task", taskId);
  return storedTaskResponse(task);
}

/**
 * Creates a task (spec "Tasks", CONTRACT.md "Responses" and "Tasks"): `created_by` is the creating API key's id,
 * `priority` defaults to `none` and `task_type` to `to_do`; `is_completed: true` sets `completed_at` to now.
 * The task, `task.created` (and `task.completed` when created completed; payload: the Task as returned) and their
 * deliveries are written in ONE statement (db/tasks.ts `insertTaskWithEvents`), which first locks the company and
 * the `item_id` item against deletion; then the dispatcher is woken. Id (uuid v7) and timestamps come from the app.
 * With an idempotency `claim` (CONTRACT "Idempotency") the same statement takes the key and stores the 201 response.
 * @returns the stored task in the Task format.
 * @throws DomainError 422 `invalid_reference` when `item_id` is not an item of the company; 401 `invalid_api_key`
 *   when the company (and with it the key) was deleted after the key was checked; with a claim,
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
  const record: TaskRecord = {
    id: uuidv7(now.getTime()),
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
  };
  const created = toTaskResponse(record, await assigneeById(ctx, companyId, record.assignedTo));
  const events = taskEvents(created, now, isCompleted ? ["task.created", "task.completed"] : ["task.created"]);
  const location = resourceLocation("tasks", created.task_id);
  const outcome = await db.insertTaskWithEvents(ctx.prisma, companyId, record, events, claim && { claim, body: JSON.stringify(created), location });
  if (!outcome.written) throw notWrittenError(outcome, record.itemId);
  ctx.eventsCommitted();
  return created;
}

/** How many times `updateTask` reads and writes again after another write to the task got in between. */
const UPDATE_ATTEMPTS = 100;

/**
 * Updates a task with the fields given (spec "Tasks": PATCH carries only the fields to change; CONTRACT.md "Tasks"):
 * `is_completed: true` sets `completed_at` to now unless the task was already completed (the original time is
 * kept), `false` clears it; `null` clears `description`, `notes`, `item_id` and the minutes. When something
 * actually changed it writes `task.updated`, plus `task.completed` when the task went from open to completed, both
 * with `changed_fields` and `previous` (CONTRACT "Previous values in update events", services/previous-values.ts; the
 * before-values are the row the `xmin`-checked statement replaces); an update that changes nothing writes nothing.
 * Optimistic, like items: the task is read, the change computed, and one statement (db/tasks.ts
 * `updateTaskWithEvents`) stores it with its events only if the row is still the version read, after locking the
 * company and a newly linked item against deletion. When another write got in between, the update is computed again
 * on the newer row, so concurrent updates of one task apply one after the other, each on the previous one's result.
 * @returns the task after the update, in the Task format.
 * @throws DomainError 404 `not_found` (unknown task or another company's); 422 `invalid_reference` (`item_id`);
 *   401 `invalid_api_key` when the company (and with it the key) was deleted after the key was checked.
 */
export async function updateTask(ctx: AppContext, companyId: string, taskId: string, input: TaskUpdate): Promise<Task> {
  for (let attempt = 1; ; attempt++) {
    const { company, task: current } = await db.readTask(ctx.prisma, companyId, taskId);
    if (!company) throw unknownApiKey();
    if (!current) throw notFound("Task", taskId);
    const now = new Date();
    const changes = taskChanges(current, input, now);
    if (Object.keys(changes).length === 0) return storedTaskResponse(current);
    const next: TaskRecord = { ...current, ...changes, updatedAt: now };
    const assignee = changes.assignedTo === undefined ? current.assignee && toUser(current.assignee) : await assigneeById(ctx, companyId, next.assignedTo);
    const updated = toTaskResponse(next, assignee);
    const payload = taskChangedPayload(storedTaskResponse(current), updated);
    if (!payload) return storedTaskResponse(current);
    const completedNow = !current.isCompleted && next.isCompleted;
    const events = taskEvents(payload, now, completedNow ? ["task.updated", "task.completed"] : ["task.updated"]);
    const outcome = await db.updateTaskWithEvents(ctx.prisma, companyId, current.rowVersion, next, changes.itemId ?? null, events);
    if (outcome.written) {
      ctx.eventsCommitted();
      return updated;
    }
    if (outcome.reason !== "changed" || attempt >= UPDATE_ATTEMPTS) throw notWrittenError(outcome, changes.itemId ?? null);
  }
}

/** The columns an update may change, with their new values. */
type TaskChanges = Partial<Omit<TaskRecord, "id" | "createdBy" | "createdAt" | "updatedAt">>;

/** The columns whose value `input` actually changes (an empty object when nothing changes). */
function taskChanges(current: TaskRecord, input: TaskUpdate, now: Date): TaskChanges {
  const changes: TaskChanges = {};
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

/**
 * The error for a task write that stored nothing: 401 when the company is gone, 422 `invalid_reference` when
 * `itemId` is not an item of the company (CONTRACT.md "Tasks"), the idempotency answers for a claimed key.
 * @throws Error for a write that lost to concurrent updates `UPDATE_ATTEMPTS` times in a row (not expected to happen).
 */
function notWrittenError(outcome: Exclude<db.TaskWriteOutcome, { written: true }>, itemId: string | null): DomainError | StoredResponseFound {
  switch (outcome.reason) {
    case "no_company":
      return unknownApiKey();
    case "no_item": {
      const message = `item_id ${itemId} is not an item of this company. Use the item_id of an existing item (GET /v1/ext/items).`;
      return domainError("invalid_reference", message, { errors: [{ path: "item_id", message }] });
    }
    case "in_use":
      return keyInUse();
    case "stored":
      return new StoredResponseFound(outcome.stored);
    case "changed":
      throw new Error(`task update: the task kept changing under ${UPDATE_ATTEMPTS} attempts in a row`);
  }
}

/** The outbox events of a task change, in order, each with `payload` (the Task format, plus `changed_fields` and `previous` for updates). */
function taskEvents(task: Task | TaskChangedEvent, now: Date, types: EventName[]): OutboxEventToInsert[] {
  return types.map((type) => ({ id: uuidv7(now.getTime()), type, payload: task }));
}

/** Optional free text: an empty string means "no text", stored as null like an absent value. */
function blankToNull(value: string | null | undefined): string | null {
  return value === undefined || value === "" ? null : value;
}

/**
 * Data access for tasks (table `tasks`). Every read and write is scoped to one company, so a task of another company
 * is indistinguishable from a missing one (CONTRACT.md "Errors": 404 never reveals other tenants' ids).
 *
 * Creates and updates are ONE raw statement each (db/sql.ts, named prepared statements), like items
 * (db/items.ts): the task, its outbox events and their deliveries (db/outbox.ts), the `item_id` reference check and,
 * for a create with an idempotency claim, the stored response (db/idempotency.ts) commit together, with no
 * transaction round trips. Each statement first locks the company row (db/companies.ts `lockedCompanyCte`), then
 * the referenced item, both `FOR KEY SHARE`, so a concurrent `DELETE FROM companies` or `DELETE FROM items` either
 * waits for it or has already happened (the statement then writes nothing and says why).
 */
import type { Prisma, PrismaClient, Task } from "../generated/prisma/client";
import { lockedCompanyCte } from "./companies";
import {
  CLAIM_SELECT,
  CLAIM_TAKEN,
  claimCtes,
  claimResult,
  retryOnStoredKeyConflict,
  storeCreatedCte,
  type ClaimRow,
  type IdempotencyClaim,
} from "./idempotency";
import { KEYSET_ORDER, keysetWhere, type KeysetPosition } from "./keyset";
import { eventParams, fanOutCtes, insertEventsCte, type OutboxEventToInsert } from "./outbox";
import type { RowWriteOutcome } from "./write-outcome";
import { query, type TransactionQuery } from "./sql";
import type { TaskRecord } from "./task-record";
import type { UserCard } from "./users";

/** A Prisma client or an interactive transaction. */
export type Db = PrismaClient | Prisma.TransactionClient;

/** Filters of the task list (CONTRACT.md "Lists"); absent fields do not filter. */
export interface TaskFilters {
  itemId?: string;
  isCompleted?: boolean;
  assignedTo?: string;
  /** Only tasks due strictly before this time. */
  dueBefore?: Date;
  /** Only tasks due strictly after this time. */
  dueAfter?: Date;
}

/**
 * A stored task and the version of its row that was read (`xmin`), which `updateTaskWithEvents` checks, with its
 * assignee: the company's user whose id equals `assigned_to` (null when none), joined in the same read.
 */
export interface StoredTask extends TaskRecord {
  rowVersion: string;
  assignee: UserCard | null;
}

/** A task row as the raw reads select it; times in milliseconds since the epoch (float8). */
interface TaskRow {
  company: string;
  id: string | null;
  row_version: string;
  title: string;
  description: string | null;
  due_ms: number;
  priority: string;
  task_type: string;
  assigned_to: string;
  created_by: string;
  item_id: string | null;
  is_completed: boolean;
  completed_ms: number | null;
  notes: string | null;
  duration_minutes: number | null;
  reminder_minutes: number | null;
  created_ms: number;
  updated_ms: number;
  assignee_id: string | null;
  assignee_name: string | null;
  assignee_email: string | null;
}

const ms = (column: string) => `(extract(epoch FROM ${column}) * 1000)::float8`;

/**
 * The company `companyId` (is it still there?) and its task `id`, in one raw SELECT.
 * @returns `company` false when the company does not exist (any more); `task` null when the task does not exist in
 * the company.
 */
export async function readTask(prisma: PrismaClient, companyId: string, id: string): Promise<{ company: boolean; task: StoredTask | null }> {
  const rows = await query<TaskRow>(
    prisma,
    `SELECT c.id AS company, ${TASK_COLUMNS}
     FROM companies c LEFT JOIN tasks t ON t.id = $1 AND t.company_id = c.id ${ASSIGNEE_JOIN}
     WHERE c.id = $2`,
    [id, companyId],
    { name: "read-task" },
  );
  const row = rows[0];
  if (!row) return { company: false, task: null };
  if (row.id === null) return { company: true, task: null };
  return { company: true, task: storedTaskOf(row as TaskRow & { id: string }) };
}

/** The task columns of `tasks t` as `TaskRow` reads them (but `company`). */
const TASK_COLUMNS = `t.id, t.xmin::text AS row_version, t.title, t.description, ${ms("t.due_at")} AS due_ms, t.priority,
       t.task_type, t.assigned_to, t.created_by, t.item_id, t.is_completed, ${ms("t.completed_at")} AS completed_ms, t.notes,
       t.duration_minutes, t.reminder_minutes, ${ms("t.created_at")} AS created_ms, ${ms("t.updated_at")} AS updated_ms,
       u.id AS assignee_id, u.name AS assignee_name, u.email AS assignee_email`;

/** Joins `users u`: the assignee of `tasks t` (CONTRACT "People"), a user of the task's own company only. */
const ASSIGNEE_JOIN = `LEFT JOIN users u ON u.id = t.assigned_to AND u.company_id = t.company_id`;

/**
 * The company's tasks linked to item `itemId`, locked `FOR UPDATE` (in id order) inside the transaction of `q`
 * (db/item-delete.ts: unlinking the tasks of a deleted item).
 */
export async function lockTasksOfItem(q: TransactionQuery, companyId: string, itemId: string): Promise<StoredTask[]> {
  const rows = await q<TaskRow & { id: string }>(
    `SELECT ${TASK_COLUMNS} FROM tasks t ${ASSIGNEE_JOIN} WHERE t.company_id = $1 AND t.item_id = $2 ORDER BY t.id FOR UPDATE OF t`,
    [companyId, itemId],
  );
  return rows.map(storedTaskOf);
}

/** A task row as a `StoredTask`. */
function storedTaskOf(row: Omit<TaskRow, "company"> & { id: string }): StoredTask {
  return {
      id: row.id,
      rowVersion: row.row_version,
      title: row.title,
      description: row.description,
      dueAt: new Date(Number(row.due_ms)),
      priority: row.priority,
      taskType: row.task_type,
      assignedTo: row.assigned_to,
      createdBy: row.created_by,
      itemId: row.item_id,
      isCompleted: row.is_completed,
      completedAt: row.completed_ms === null ? null : new Date(Number(row.completed_ms)),
      notes: row.notes,
      durationMinutes: row.duration_minutes,
      reminderMinutes: row.reminder_minutes,
      createdAt: new Date(Number(row.created_ms)),
      updatedAt: new Date(Number(row.updated_ms)),
      assignee: row.assignee_id === null ? null : { id: row.assignee_id, name: row.assignee_name, email: row.assignee_email! },
  };
}

/**
 * One page of a company's tasks, newest first (created_at desc, id desc), strictly after `after`.
 * Fetches `take` rows; callers pass `limit + 1` to learn whether a next page exists.
 */
export function listTasks(db: Db, companyId: string, filters: TaskFilters, after: KeysetPosition | undefined, take: number): Promise<Task[]> {
  const where: Prisma.TaskWhereInput = { companyId };
  if (filters.itemId !== undefined) where.itemId = filters.itemId;
  if (filters.isCompleted !== undefined) where.isCompleted = filters.isCompleted;
  if (filters.assignedTo !== undefined) where.assignedTo = filters.assignedTo;
  if (filters.dueBefore || filters.dueAfter) {
    where.dueAt = {
      ...(filters.dueBefore ? { lt: filters.dueBefore } : {}),
      ...(filters.dueAfter ? { gt: filters.dueAfter } : {}),
    };
  }
  return db.task.findMany({ where: { AND: [where, keysetWhere(after)] }, orderBy: KEYSET_ORDER, take });
}

/** Why a task write stored nothing (see `insertTaskWithEvents`, `updateTaskWithEvents`). */
export type TaskWriteOutcome = RowWriteOutcome;

/**
 * The stored column values of a task, as parameters `$first` .. `$first + 11` (title, description, due_at,
 * priority, task_type, assigned_to, item_id, is_completed, completed_at, notes, duration and reminder minutes).
 * Timestamps go as ISO 8601 text cast to timestamptz, so no driver turns them into local time first.
 */
function columnParams(task: TaskRecord): unknown[] {
  return [
    task.title,
    task.description,
    task.dueAt.toISOString(),
    task.priority,
    task.taskType,
    task.assignedTo,
    task.itemId,
    task.isCompleted,
    task.completedAt?.toISOString() ?? null,
    task.notes,
    task.durationMinutes,
    task.reminderMinutes,
  ];
}

/**
 * The CTE `item_row`: the company's item of the SQL parameter `itemParam` locked `FOR KEY SHARE` after the company
 * row (`lockedCompanyCte`); empty when the parameter is null, the item is unknown or another company's.
 */
function lockedItemCte(itemParam: string): string {
  return `item_row AS MATERIALIZED (
           SELECT i.id FROM items i
           WHERE i.id = ${itemParam}::text AND i.company_id = $2 AND EXISTS (SELECT 1 FROM company_row) FOR KEY SHARE
         )`;
}

/** SQL: the statement may write (the company row is locked, and the item to check, if any, too). */
function referencesHold(itemParam: string): string {
  return `EXISTS (SELECT 1 FROM company_row) AND (${itemParam}::text IS NULL OR EXISTS (SELECT 1 FROM item_row))`;
}

/** The CTEs of a task create after `company_row`: item check, insert (`new_task`), events, deliveries (`queued`). */
const INSERT_TASK_CTES = `${lockedItemCte("$9")}, new_task AS (
           INSERT INTO tasks (id, company_id, title, description, due_at, priority, task_type, assigned_to, item_id,
             is_completed, completed_at, notes, duration_minutes, reminder_minutes, created_by, created_at, updated_at)
           SELECT $1, $2, $3, $4, $5::timestamptz, $6, $7, $8, $9, $10::boolean, $11::timestamptz, $12, $13::int, $14::int, $15,
             $16::timestamptz, $16::timestamptz
           WHERE ${referencesHold("$9")}
           RETURNING id
         ), ${insertEventsCte("new_events", "new_task", "$2", 17)}, ${fanOutCtes("new_events", "$2")}`;

/** The outcome columns every task write selects. */
const OUTCOME_COLUMNS = `(SELECT count(*) FROM company_row)::int AS company, (SELECT count(*) FROM item_row)::int AS item`;

/** The reason a write that stored nothing gives, from its outcome columns. */
function notWritten(row: { company: number; item: number }, itemChecked: boolean): TaskWriteOutcome {
  if (Number(row.company) === 0) return { written: false, reason: "no_company" };
  if (itemChecked && Number(row.item) === 0) return { written: false, reason: "no_item" };
  return { written: false, reason: "changed" };
}

/**
 * Inserts the task `task` of company `companyId` (created by the API key `createdBy`; `created_at` = `updated_at`
 * = `task.createdAt`) with its outbox `events` (in this order, so their `seq` follows it) and one pending delivery
 * per active subscription of the company to each event's name, in ONE statement. The company row and then the
 * item `task.itemId` (when not null) are locked `FOR KEY SHARE` first; nothing is written when either is missing.
 * With `idempotency` (CONTRACT "Idempotency") the same statement takes the key's advisory lock without waiting,
 * reads its stored response and, only when the lock is taken and nothing is stored, writes and stores the 201
 * response `body` with `location` (run again when a concurrent response won the key's primary key, as items do).
 * @returns `written` true, or why nothing was written: `no_company`, `no_item`, `in_use`, `stored`.
 * @throws the database error when a constraint fails (nothing is written then).
 */
export async function insertTaskWithEvents(
  prisma: PrismaClient,
  companyId: string,
  task: TaskRecord,
  events: OutboxEventToInsert[],
  idempotency?: { claim: IdempotencyClaim; body: string; location: string },
): Promise<TaskWriteOutcome> {
  const params = [task.id, companyId, ...columnParams(task), task.createdBy, task.createdAt.toISOString(), ...eventParams(events)];
  const itemChecked = task.itemId !== null;
  type Row = { company: number; item: number; created: number };
  const created = `(SELECT count(*) FROM new_task)::int AS created`;
  if (!idempotency) {
    const rows = await query<Row>(
      prisma,
      `WITH ${lockedCompanyCte("$2")}, ${INSERT_TASK_CTES}
       SELECT ${OUTCOME_COLUMNS}, ${created}`,
      params,
      { name: "insert-task-with-events" },
    );
    const row = rows[0]!;
    return Number(row.created) > 0 ? { written: true } : notWritten(row, itemChecked);
  }
  const { claim, body, location } = idempotency;
  params.push(claim.key, claim.requestHash, body, location, claim.ttlSeconds);
  const rows = await retryOnStoredKeyConflict(prisma, claim, () =>
    query<Row & ClaimRow>(
      prisma,
      `WITH ${claimCtes("$2", "$21")}, ${lockedCompanyCte("$2", CLAIM_TAKEN)}, ${INSERT_TASK_CTES}, ${storeCreatedCte("new_task", {
        company: "$2",
        key: "$21",
        hash: "$22",
        body: "$23",
        location: "$24",
        ttl: "$25",
      })}
       SELECT ${OUTCOME_COLUMNS}, ${created}, ${CLAIM_SELECT.columns}
       ${CLAIM_SELECT.from}`,
      params,
      { name: "insert-task-with-events-idempotent" },
    ),
  );
  const row = rows[0]!;
  const claimed = claimResult(row);
  if (claimed) return "inUse" in claimed ? { written: false, reason: "in_use" } : { written: false, reason: "stored", stored: claimed.stored };
  return Number(row.created) > 0 ? { written: true } : notWritten(row, itemChecked);
}

/**
 * Stores `next` (every column but `created_by` and `created_at`; `updated_at` = `next.updatedAt`) on the company's
 * task `next.id` only if its row is still the version `rowVersion` that was read (`readTask`), and in the SAME
 * statement writes `events` (in this order) with their deliveries. The company row, then the item `checkItemId`
 * (the newly linked item; null for none) are locked `FOR KEY SHARE` before the task row. One atomic statement: no
 * transaction round trips, no row held locked while the app works.
 * @returns `written` true, or why nothing was written: `no_company`, `no_item`, or `changed` (the task changed or
 * was deleted since it was read: read it again).
 * @throws the database error when a constraint fails (nothing is written then).
 */
export async function updateTaskWithEvents(
  prisma: PrismaClient,
  companyId: string,
  rowVersion: string,
  next: TaskRecord,
  checkItemId: string | null,
  events: OutboxEventToInsert[],
): Promise<TaskWriteOutcome> {
  const rows = await query<{ company: number; item: number; updated: number }>(
    prisma,
    `WITH ${lockedCompanyCte("$2")}, ${lockedItemCte("$17")}, updated AS (
       UPDATE tasks SET title = $3, description = $4, due_at = $5::timestamptz, priority = $6, task_type = $7, assigned_to = $8,
         item_id = $9, is_completed = $10, completed_at = $11::timestamptz, notes = $12, duration_minutes = $13::int,
         reminder_minutes = $14::int, updated_at = $15::timestamptz
       WHERE id = $1 AND company_id = $2 AND xmin = $16::xid AND ${referencesHold("$17")}
       RETURNING id
     ), ${insertEventsCte("new_events", "updated", "$2", 18)}, ${fanOutCtes("new_events", "$2")}
     SELECT ${OUTCOME_COLUMNS}, (SELECT count(*) FROM updated)::int AS updated`,
    [next.id, companyId, ...columnParams(next), next.updatedAt.toISOString(), rowVersion, checkItemId, ...eventParams(events)],
    { name: "update-task-with-events" },
  );
  const row = rows[0]!;
  return Number(row.updated) > 0 ? { written: true } : notWritten(row, checkItemId !== null);
}

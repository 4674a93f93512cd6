/**
 * Data access for tasks (table `tasks`). Every read and write is scoped to one company, so a task of another company
 * is indistinguishable from a missing one (CONTRACT.md "Errors": 404 never reveals other tenants' ids).
 */
import type { Prisma, PrismaClient, Task } from "../generated/prisma/client";
import { KEYSET_ORDER, keysetWhere, type KeysetPosition } from "./keyset";
import type { TaskRecord } from "./task-record";

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

/** The columns a create writes: every column of the Task format's record, plus the owning company. */
export type TaskInsert = Omit<TaskRecord, "id"> & { companyId: string };

/** The columns an update may change. */
export type TaskChanges = Partial<Omit<TaskInsert, "companyId" | "createdBy" | "createdAt">>;

/** The task `id` of `companyId`, or null when it does not exist there. */
export function findTask(db: Db, companyId: string, id: string): Promise<Task | null> {
  return db.task.findFirst({ where: { id, companyId } });
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

/** Inserts a task and returns the stored row. */
export function insertTask(db: Db, data: TaskInsert): Promise<Task> {
  return db.task.create({ data });
}

/**
 * Locks the task row (`SELECT ... FOR UPDATE`) until the surrounding transaction ends, so concurrent updates of one
 * task are applied one after the other and each sees the previous one's result.
 * @returns the locked row, or null when the task does not exist in `companyId`.
 */
export async function lockTask(tx: Prisma.TransactionClient, companyId: string, id: string): Promise<Task | null> {
  const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM tasks WHERE id = ${id} AND company_id = ${companyId} FOR UPDATE`;
  if (locked.length === 0) return null;
  return tx.task.findUnique({ where: { id } });
}

/** Applies `changes` to a task that exists (see `lockTask`) and returns the updated row. */
export function updateTask(tx: Prisma.TransactionClient, id: string, changes: TaskChanges): Promise<Task> {
  return tx.task.update({ where: { id }, data: changes });
}

/**
 * Whether `itemId` names an item of `companyId` (a task's `item_id` reference, CONTRACT.md "Tasks"). Inside a
 * transaction the item is also locked against deletion (`FOR KEY SHARE`) until it commits, so the reference that was
 * checked is the one stored. Reads table `items`; kept here because it is only the task's reference check.
 */
export async function itemBelongsToCompany(db: Db, companyId: string, itemId: string): Promise<boolean> {
  const rows = await db.$queryRaw<{ id: string }[]>`SELECT id FROM items WHERE id = ${itemId} AND company_id = ${companyId} FOR KEY SHARE`;
  return rows.length > 0;
}

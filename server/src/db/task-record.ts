/**
 * The stored task columns (data layer) that `toTaskResponse` (services/task-format.ts) formats: a row of table `tasks`,
 * or a synthetic sample row.
 */
export interface TaskRecord {
  id: string;
  title: string;
  description: string | null;
  dueAt: Date;
  priority: string;
  taskType: string;
  assignedTo: string;
  createdBy: string;
  itemId: string | null;
  isCompleted: boolean;
  completedAt: Date | null;
  notes: string | null;
  durationMinutes: number | null;
  reminderMinutes: number | null;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * Hidden trigger `task_list`: the task picker behind every Task input (`dynamic: 'task_list.id.label'`): Update Task
 * and Find Task. Spec "Tasks": GET /v1/ext/tasks, newest first; Zapier pages through it with `canPaginate` over the
 * API's keyset cursor (client.ts `getPickerPage`). Tasks have no short ID, so each choice is labelled with the title,
 * the due date and the assignee ("Call Ada · due 2026-03-05 · Maria Garcia": the assigned user's name or email, else
 * `assigned_to` as written), and "(done)" when completed.
 */
import { defineTrigger, type Bundle, type ZObject } from 'zapier-platform-core';
import type { Task } from '@stageline/shared';
import { apiPath, getPickerPage } from '../client';

/** One choice of the task picker. */
export interface TaskChoice {
  /** The task id (what the dropdown puts into the field). */
  id: string;
  /** What the dropdown shows. */
  label: string;
  title: string;
  due_at: string;
  assigned_to: string;
  is_completed: boolean;
}

/** Who a task is for, as a choice shows it: the assigned user's name, else their email, else `assigned_to` as written. */
function assigneeLabel(task: Task): string {
  return task.assignee?.name?.trim() || task.assignee?.email || task.assigned_to;
}

/** A task as a picker choice. */
export function taskChoice(task: Task): TaskChoice {
  const done = task.is_completed ? ' (done)' : '';
  return {
    id: task.task_id,
    label: `${task.title} · due ${task.due_at.slice(0, 10)} · ${assigneeLabel(task)}${done}`,
    title: task.title,
    due_at: task.due_at,
    assigned_to: task.assigned_to,
    is_completed: task.is_completed,
  };
}

/** One page (bundle.meta.page) of the company's tasks, newest first. */
export async function listTaskChoices(z: ZObject, bundle: Bundle): Promise<TaskChoice[]> {
  const tasks = await getPickerPage<Task>(z, bundle, apiPath('tasks'));
  return tasks.map(taskChoice);
}

export default defineTrigger({
  key: 'task_list',
  noun: 'Task',
  display: {
    label: 'List Tasks',
    description: 'Lists tasks, newest first, for the task dropdowns.',
    hidden: true,
  },
  operation: {
    type: 'polling',
    canPaginate: true,
    perform: listTaskChoices,
    sample: {
      id: 'b2e4f6a8-1c3d-4e5f-8a9b-0c1d2e3f4a5b',
      label: 'Call Ada about the proposal · due 2026-03-05 · maria@acme.example',
      title: 'Call Ada about the proposal',
      due_at: '2026-03-05T15:00:00.000Z',
      assigned_to: 'maria@acme.example',
      is_completed: false,
    },
    outputFields: [
      { key: 'id', label: 'Task ID', type: 'string' },
      { key: 'label', label: 'Title, Due Date and Assignee', type: 'string' },
      { key: 'title', label: 'Title', type: 'string' },
      { key: 'due_at', label: 'Due At', type: 'datetime' },
      { key: 'assigned_to', label: 'Assigned To', type: 'string' },
      { key: 'is_completed', label: 'Completed', type: 'boolean' },
    ],
  },
});

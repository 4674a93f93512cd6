/**
 * Task fields (spec "Task (response)" and "Task write fields"; CONTRACT "Tasks"): Zapier input fields for create
 * and update, output fields, a realistic sample, and the mapping of Zapier input to a task write body.
 */
import type { PlainInputField, PlainOutputField } from 'zapier-platform-core';
import { TASK_CHANGE_FIELDS, TASK_PRIORITIES, TASK_TYPES, TaskSchema, type Task, type TaskChangedEvent } from '@stageline/shared';
import { assigneeInputField, itemInputField } from './pickers';
import { definedOnly, toBoolean, toChoice, toDateTime, toId, toInteger, toText } from './coerce';

/** Human labels of the priorities (values from the contract's TASK_PRIORITIES). */
const PRIORITY_LABELS: Record<(typeof TASK_PRIORITIES)[number], string> = {
  none: 'None',
  low: 'Low',
  medium: 'Medium',
  high: 'High',
  urgent: 'Urgent',
};

/** Human labels of the task types (values from the contract's TASK_TYPES). */
const TASK_TYPE_LABELS: Record<(typeof TASK_TYPES)[number], string> = {
  to_do: 'To-do',
  call: 'Call',
  email: 'Email',
  meeting: 'Meeting',
  follow_up: 'Follow-up',
};

/** Whether the form creates a task (title, due date, assignee required) or updates one (everything optional). */
export type TaskFieldMode = 'create' | 'update';

/** The task write fields as Zapier input fields, in the order of the spec's table. */
export function taskInputFields(mode: TaskFieldMode): PlainInputField[] {
  const required = mode === 'create';
  const keep = mode === 'update' ? ' Leave empty to keep the current value.' : '';
  return [
    { key: 'title', label: 'Title', type: 'string', required, helpText: `What needs to be done (up to 255 characters).${keep}` },
    {
      key: 'due_at',
      label: 'Due At',
      type: 'datetime',
      required,
      helpText: `When the task is due. Sent with its time zone; a date without a time is read as midnight UTC.${keep}`,
    },
    assigneeInputField({
      required,
      helpText: `The person responsible: choose a teammate (their Stageline user, so the task shows who it is), or enter any identifier your team uses as a custom value (e.g. an email address; up to 255 characters).${keep}`,
    }),
    { key: 'description', label: 'Description', type: 'text', required: false, helpText: `Details of the task (up to 10,000 characters).${keep}` },
    {
      key: 'priority',
      label: 'Priority',
      type: 'string',
      required: false,
      choices: TASK_PRIORITIES.map((value) => ({ value, label: PRIORITY_LABELS[value], sample: value })),
      helpText: `One of: ${TASK_PRIORITIES.join(', ')}.${keep}`,
    },
    {
      key: 'task_type',
      label: 'Task Type',
      type: 'string',
      required: false,
      choices: TASK_TYPES.map((value) => ({ value, label: TASK_TYPE_LABELS[value], sample: value })),
      helpText: `One of: ${TASK_TYPES.join(', ')}.${keep}`,
    },
    itemInputField({
      required: false,
      helpText: `The item this task belongs to: choose it by short ID and name, or map the Item ID from a Stageline step.${keep}`,
    }),
    { key: 'duration_minutes', label: 'Duration (Minutes)', type: 'integer', required: false, helpText: `How long the task takes, in whole minutes.${keep}` },
    {
      key: 'reminder_minutes',
      label: 'Reminder (Minutes Before Due)',
      type: 'integer',
      required: false,
      helpText: `Remind this many whole minutes before the due time.${keep}`,
    },
    { key: 'notes', label: 'Notes', type: 'text', required: false, helpText: `Notes (up to 10,000 characters).${keep}` },
    {
      key: 'is_completed',
      label: 'Completed',
      type: 'boolean',
      required: false,
      helpText:
        mode === 'create'
          ? 'Create the task already completed (yes) or open (no, the default).'
          : 'Yes marks the task completed (Stageline sets Completed At); no reopens it. Leave empty to keep it as it is.',
    },
  ];
}

/**
 * The task write body from Zapier input: strings coerced (integers, booleans, date-times, choices), blank values
 * left out so an update only sends what was provided. The result is checked with TaskCreateSchema /
 * TaskUpdateSchema by the caller.
 */
export function taskBodyFrom(inputData: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return definedOnly({
    title: toText(inputData.title, 'Title'),
    due_at: toDateTime(inputData.due_at, 'Due At'),
    assigned_to: toId(inputData.assigned_to, 'Assigned To'),
    description: toText(inputData.description, 'Description'),
    priority: toChoice(inputData.priority, TASK_PRIORITIES, 'Priority'),
    task_type: toChoice(inputData.task_type, TASK_TYPES, 'Task Type'),
    item_id: toId(inputData.item_id, 'Item ID'),
    duration_minutes: toInteger(inputData.duration_minutes, 'Duration (Minutes)'),
    reminder_minutes: toInteger(inputData.reminder_minutes, 'Reminder (Minutes Before Due)'),
    notes: toText(inputData.notes, 'Notes'),
    is_completed: toBoolean(inputData.is_completed, 'Completed'),
  });
}

/**
 * Label and type of every Task field; typed over the contract's Task, so a field added there must be labelled here.
 * `assignee` (an object or null) is listed as its members, which Zapier flattens to `assignee__user_id` etc.
 */
export const TASK_FIELD_LABELS: { [K in Exclude<keyof Task, 'assignee'>]-?: Pick<PlainOutputField, 'label' | 'type'> } & {
  assignee: PlainOutputField[];
} = {
  task_id: { label: 'Task ID', type: 'string' },
  title: { label: 'Title', type: 'string' },
  description: { label: 'Description', type: 'string' },
  due_at: { label: 'Due At', type: 'datetime' },
  priority: { label: 'Priority', type: 'string' },
  is_completed: { label: 'Completed', type: 'boolean' },
  task_type: { label: 'Task Type', type: 'string' },
  assigned_to: { label: 'Assigned To', type: 'string' },
  assignee: [
    { key: 'assignee__user_id', label: 'Assignee User ID', type: 'string' },
    { key: 'assignee__name', label: 'Assignee Name', type: 'string' },
    { key: 'assignee__email', label: 'Assignee Email', type: 'string' },
  ],
  created_by: { label: 'Created By (API Key ID)', type: 'string' },
  item_id: { label: 'Item ID', type: 'string' },
  completed_at: { label: 'Completed At', type: 'datetime' },
  notes: { label: 'Notes', type: 'string' },
  duration_minutes: { label: 'Duration (Minutes)', type: 'integer' },
  reminder_minutes: { label: 'Reminder (Minutes Before Due)', type: 'integer' },
  created_at: { label: 'Created At', type: 'datetime' },
  updated_at: { label: 'Updated At', type: 'datetime' },
};

/** The Task fields as output fields, in the order of the contract's TaskSchema (the order of the API's JSON). */
export const TASK_FIELD_OUTPUT_FIELDS: PlainOutputField[] = (Object.keys(TaskSchema.shape) as (keyof Task)[]).flatMap((key) =>
  key === 'assignee' ? TASK_FIELD_LABELS.assignee : [{ key, ...TASK_FIELD_LABELS[key] }],
);

/** Output fields of task steps (Task plus Zapier's `id`). */
export const TASK_OUTPUT_FIELDS: PlainOutputField[] = [{ key: 'id', label: 'ID (same as Task ID)', type: 'string' }, ...TASK_FIELD_OUTPUT_FIELDS];

/** A Task with Zapier's `id` (= `task_id`). */
export type ZapierTask = Task & { id: string };

/** Adds `id` = `task_id`. */
export function withTaskId(task: Task): ZapierTask {
  return { id: task.task_id, ...task };
}

/**
 * Adds `id` = `${task_id}:${completed_at}` to a completed task. A task can be reopened and completed again; each
 * completion has its own `completed_at`, so each gets its own id (and triggers once), while a redelivery of the same
 * completion keeps its id.
 */
export function withCompletionId<T extends Task>(task: T): T & { id: string } {
  return { ...task, id: `${task.task_id}:${task.completed_at ?? ''}` };
}

/**
 * Output fields of what a task change carries (CONTRACT "Previous values in update events": `task.updated` and
 * `task.completed`): Changed Fields, then "Previous <label>" for every field `changed_fields` can name (Zapier
 * flattens `previous.due_at` to `previous__due_at`).
 */
export const TASK_CHANGE_OUTPUT_FIELDS: PlainOutputField[] = [
  { key: 'changed_fields', label: 'Changed Fields', type: 'string', list: true },
  ...TASK_CHANGE_FIELDS.map((key): PlainOutputField => ({ key: `previous__${key}`, label: `Previous ${TASK_FIELD_LABELS[key].label}`, type: TASK_FIELD_LABELS[key].type })),
];

/** A task change with Zapier's `id`. */
export type ZapierTaskChange = TaskChangedEvent & { id: string };

/**
 * A listed task as a change, for samples: the list does not say what changed last, so `changed_fields` is empty and
 * `previous` too. A payload that carries its own change keeps it.
 */
export function asTaskChange(task: Task): TaskChangedEvent {
  return { changed_fields: [], previous: {}, ...task };
}

/**
 * A listed task as a completed one, for "Completed Task" samples: the sample endpoint's task is open, so it gets
 * `is_completed` and a `completed_at` (its `updated_at`), and (as a completion does) `changed_fields`
 * `is_completed`, `completed_at` with the open state as `previous`; tasks that are completed already stay as they are.
 */
export function asCompletedTask(task: Task): TaskChangedEvent {
  if (task.is_completed && task.completed_at !== null) return asTaskChange(task);
  return {
    changed_fields: ['is_completed', 'completed_at'],
    previous: { is_completed: false, completed_at: null },
    ...task,
    is_completed: true,
    completed_at: task.completed_at ?? task.updated_at,
  };
}

/**
 * Adds `id` = `${task_id}:${updated_at}` to a task change ("Updated Task"): every change sets `updated_at`, so each
 * update triggers once, and a redelivery of the same update keeps its id and is dropped.
 */
export function withTaskChangeId(task: TaskChangedEvent): ZapierTaskChange {
  return { ...task, id: `${task.task_id}:${task.updated_at}` };
}

/** A realistic task. */
export const TASK_SAMPLE: ZapierTask = {
  id: 'b2e4f6a8-1c3d-4e5f-8a9b-0c1d2e3f4a5b',
  task_id: 'b2e4f6a8-1c3d-4e5f-8a9b-0c1d2e3f4a5b',
  title: 'Call Ada about the proposal',
  description: 'Walk through pricing for 50 seats.',
  due_at: '2026-03-05T15:00:00.000Z',
  priority: 'high',
  is_completed: false,
  task_type: 'call',
  assigned_to: '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c',
  assignee: { user_id: '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c', name: 'Maria Garcia', email: 'maria@acme.example' },
  created_by: '7d9f1b3c-5e7a-4c9e-b1d3-f5a7c9e1b3d5',
  item_id: '5f0c6a53-8a2e-4b7e-9a51-2f1d0e6c4b11',
  completed_at: null,
  notes: null,
  duration_minutes: 30,
  reminder_minutes: 15,
  created_at: '2026-03-01T09:31:00.000Z',
  updated_at: '2026-03-01T09:31:00.000Z',
};

/** Output fields of "Completed Task": the task fields, with `id` being task ID and completion time, then the change. */
export const COMPLETED_TASK_OUTPUT_FIELDS: PlainOutputField[] = [
  { key: 'id', label: 'ID (Task ID:Completed At, one per completion)', type: 'string' },
  ...TASK_FIELD_OUTPUT_FIELDS,
  ...TASK_CHANGE_OUTPUT_FIELDS,
];

/** A realistic completed task: the sample task, done the day before it was due, with notes added on completion. */
export const COMPLETED_TASK_SAMPLE: ZapierTaskChange = withCompletionId({
  ...TASK_SAMPLE,
  is_completed: true,
  completed_at: '2026-03-04T16:20:00.000Z',
  notes: 'Ada wants the annual plan; proposal to follow.',
  updated_at: '2026-03-04T16:20:00.000Z',
  changed_fields: ['is_completed', 'completed_at', 'notes'],
  previous: { is_completed: false, completed_at: null, notes: null },
});

/** Output fields of "Updated Task": the task fields, with `id` being task ID and update time, then the change. */
export const TASK_CHANGE_TRIGGER_OUTPUT_FIELDS: PlainOutputField[] = [
  { key: 'id', label: 'ID (Task ID:Updated At, one per update)', type: 'string' },
  ...TASK_FIELD_OUTPUT_FIELDS,
  ...TASK_CHANGE_OUTPUT_FIELDS,
];

/** A realistic task update: the sample task moved a day later and given a higher priority. */
export const TASK_CHANGE_SAMPLE: ZapierTaskChange = withTaskChangeId({
  ...TASK_SAMPLE,
  due_at: '2026-03-06T15:00:00.000Z',
  priority: 'urgent',
  updated_at: '2026-03-02T10:12:00.000Z',
  changed_fields: ['due_at', 'priority'],
  previous: { due_at: '2026-03-05T15:00:00.000Z', priority: 'high' },
});

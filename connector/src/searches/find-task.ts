/**
 * Search `find_task` ("Find Task"): a task by its ID (GET /v1/ext/tasks/{task_id}), or by exact title (trimmed,
 * case-insensitive) among the tasks the list filters of CONTRACT "Lists" select: `item_id`, `assigned_to`,
 * `is_completed` (open / completed). The contract has no title filter, so the title is compared here, over the
 * newest FIND_TASK_MAX_PAGES pages of 500 tasks that pass the filters (following `Link: rel="next"`); choosing the
 * item or the assignee keeps that set small. No match is an empty result; results are full Tasks, newest first,
 * each with `id` = `task_id`.
 */
import { defineSearch, type Bundle, type ZObject } from 'zapier-platform-core';
import { LINK_HEADER, MAX_PAGE_LIMIT, type Task } from '@stageline/shared';
import { apiPath, callApi, nextLink, type ApiCall } from '../client';
import { invalidInput, toId, toText } from '../fields/coerce';
import { assigneeInputField, itemInputField, taskInputField } from '../fields/pickers';
import { TASK_OUTPUT_FIELDS, TASK_SAMPLE, withTaskId, type ZapierTask } from '../fields/task-fields';
import { throwForProblem } from '../middleware';

/** Pages of 500 tasks a title search reads at most (2,000 tasks; four of the 60 requests a minute a key may make). */
export const FIND_TASK_MAX_PAGES = 4;

/** The most matches one search returns. */
export const FIND_TASK_LIMIT = 25;

/** The Completion input's choices and the `is_completed` filter each stands for. */
const COMPLETION: Record<string, boolean | undefined> = { open: false, completed: true, any: undefined };

/** What the step searches by. */
interface TaskCriteria {
  taskId?: string | undefined;
  title?: string | undefined;
  itemId?: string | undefined;
  assignedTo?: string | undefined;
  isCompleted?: boolean | undefined;
}

/** Whether `task` satisfies the criteria besides its ID. */
function matches(task: Task, c: TaskCriteria): boolean {
  return (
    (c.title === undefined || task.title.trim().toLowerCase() === c.title.toLowerCase()) &&
    (c.itemId === undefined || task.item_id === c.itemId) &&
    (c.assignedTo === undefined || task.assigned_to === c.assignedTo) &&
    (c.isCompleted === undefined || task.is_completed === c.isCompleted)
  );
}

/** The step's criteria from its input. @throws an input error for an unknown Completion value. */
function criteriaOf(inputData: Readonly<Record<string, unknown>>): TaskCriteria {
  const completion = toId(inputData.completion, 'Completion') ?? 'any';
  if (!(completion in COMPLETION)) throw invalidInput(`Completion must be one of: ${Object.keys(COMPLETION).join(', ')}.`);
  return {
    taskId: toId(inputData.task_id, 'Task'),
    title: toText(inputData.title, 'Title')?.trim() || undefined,
    itemId: toId(inputData.item_id, 'Item'),
    assignedTo: toId(inputData.assigned_to, 'Assigned To'),
    isCompleted: COMPLETION[completion],
  };
}

/**
 * The tasks matching the step's criteria, newest first, each with `id`; [] when none.
 * @throws an input error when neither a task nor a title is given; the API's errors (middleware.ts) otherwise,
 *   except that an unknown task ID (404) is "not found", not an error.
 */
export async function perform(z: ZObject, bundle: Bundle): Promise<ZapierTask[]> {
  const criteria = criteriaOf(bundle.inputData);
  if (criteria.taskId !== undefined) {
    const response = await callApi<Task>(z, { url: apiPath('tasks', criteria.taskId), skipThrowForStatus: true });
    if (response.status === 404) return [];
    if (response.status >= 400) throwForProblem(z, response);
    return matches(response.data, criteria) ? [withTaskId(response.data)] : [];
  }
  if (criteria.title === undefined) throw invalidInput('Give a Task (ID) or a Title to search by.');
  const found: ZapierTask[] = [];
  let call: ApiCall | null = {
    url: apiPath('tasks'),
    params: { item_id: criteria.itemId, assigned_to: criteria.assignedTo, is_completed: criteria.isCompleted, limit: MAX_PAGE_LIMIT },
  };
  for (let page = 0; call !== null && page < FIND_TASK_MAX_PAGES && found.length < FIND_TASK_LIMIT; page += 1) {
    const response = await callApi<Task[]>(z, call);
    for (const task of response.data) if (matches(task, criteria) && found.length < FIND_TASK_LIMIT) found.push(withTaskId(task));
    const next = nextLink(response.getHeader(LINK_HEADER));
    call = next === null ? null : { url: next };
  }
  return found;
}

export default defineSearch({
  key: 'find_task',
  noun: 'Task',
  display: {
    label: 'Find Task',
    description: 'Finds a task by its ID, or by its exact title, optionally for one item or assignee and open or completed only.',
  },
  operation: {
    inputFields: [
      taskInputField({ required: false, searchable: false, helpText: 'Find this task: choose it, or map a Task ID from an earlier step.' }),
      {
        key: 'title',
        label: 'Title',
        type: 'string',
        required: false,
        helpText: 'The exact task title (upper or lower case and surrounding spaces do not matter). The newest matching task is used.',
      },
      itemInputField({ required: false, helpText: 'Only tasks of this item.' }),
      assigneeInputField({
        required: false,
        helpText: 'Only tasks assigned to this teammate (choose one), or to this identifier as used when the task was created (a custom value, e.g. an email address).',
      }),
      {
        key: 'completion',
        label: 'Completion',
        type: 'string',
        required: false,
        default: 'any',
        choices: [
          { value: 'any', label: 'Open or completed', sample: 'any' },
          { value: 'open', label: 'Open only', sample: 'open' },
          { value: 'completed', label: 'Completed only', sample: 'completed' },
        ],
        helpText: 'Whether to find open tasks, completed tasks, or both.',
      },
    ],
    perform,
    sample: TASK_SAMPLE,
    outputFields: TASK_OUTPUT_FIELDS,
  },
});

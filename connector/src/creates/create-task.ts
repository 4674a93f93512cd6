/**
 * Create `create_task` ("Create Task"): POST /v1/ext/tasks (spec "Tasks", task write fields; CONTRACT "Responses":
 * 201 with the full Task).
 */
import { defineCreate, type Bundle, type ZObject } from 'zapier-platform-core';
import { TaskCreateSchema, type Task } from '@stageline/shared';
import { apiPath, sendJson } from '../client';
import { checkedBody } from '../fields/coerce';
import { TASK_OUTPUT_FIELDS, TASK_SAMPLE, taskBodyFrom, taskInputFields, withTaskId, type ZapierTask } from '../fields/task-fields';

/** Creates the task from coerced input checked with TaskCreateSchema; returns it with `id` = `task_id`. */
export async function perform(z: ZObject, bundle: Bundle): Promise<ZapierTask> {
  const body = checkedBody(TaskCreateSchema, taskBodyFrom(bundle.inputData), 'task');
  return withTaskId(await sendJson<Task>(z, 'POST', apiPath('tasks'), body));
}

export default defineCreate({
  key: 'create_task',
  noun: 'Task',
  display: {
    label: 'Create Task',
    description: 'Creates a task in Stageline, optionally linked to an item.',
  },
  operation: {
    inputFields: taskInputFields('create'),
    perform,
    sample: TASK_SAMPLE,
    outputFields: TASK_OUTPUT_FIELDS,
  },
});

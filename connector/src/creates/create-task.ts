/**
 * Create `create_task` ("Create Task"): POST /v1/ext/tasks (spec "Tasks", task write fields; CONTRACT "Responses":
 * 201 with the full Task).
 */
import { defineCreate, type Bundle, type ZObject } from 'zapier-platform-core';
import { TaskCreateSchema, type Task } from '@stageline/shared';
import { apiPath, createJson } from '../client';
import { checkedBody } from '../fields/coerce';
import { idempotencyKeyFor, idempotencyKeyInputField } from '../idempotency';
import { TASK_OUTPUT_FIELDS, TASK_SAMPLE, taskBodyFrom, taskInputFields, withTaskId, type ZapierTask } from '../fields/task-fields';

/** The operation key; also part of the Idempotency-Key derivation (idempotency.ts). */
export const CREATE_TASK_KEY = 'create_task';

/**
 * Creates the task from coerced input checked with TaskCreateSchema, with an Idempotency-Key derived from the Zap,
 * this action, the body and the optional override (idempotency.ts); returns it with `id` = `task_id`.
 * Errors: InvalidData (checked locally), 4xx via middleware.ts.
 */
export async function perform(z: ZObject, bundle: Bundle): Promise<ZapierTask> {
  const body = checkedBody(TaskCreateSchema, taskBodyFrom(bundle.inputData), 'task');
  const key = idempotencyKeyFor(bundle, CREATE_TASK_KEY, body);
  return withTaskId(await createJson<Task>(z, apiPath('tasks'), body, key));
}

export default defineCreate({
  key: CREATE_TASK_KEY,
  noun: 'Task',
  display: {
    label: 'Create Task',
    description: 'Creates a task in Stageline, optionally linked to an item.',
  },
  operation: {
    inputFields: [...taskInputFields('create'), idempotencyKeyInputField],
    perform,
    sample: TASK_SAMPLE,
    outputFields: TASK_OUTPUT_FIELDS,
  },
});

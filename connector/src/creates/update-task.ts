/**
 * Create `update_task` ("Update Task"): PATCH /v1/ext/tasks/{task_id} with only the provided fields (spec "Tasks";
 * CONTRACT "Tasks": completing sets `completed_at`, reopening clears it; 200 with the full Task).
 */
import { defineCreate, type Bundle, type ZObject } from 'zapier-platform-core';
import { TaskUpdateSchema, type Task } from '@stageline/shared';
import { apiPath, sendJson } from '../client';
import { checkedBody, requireId } from '../fields/coerce';
import { taskInputField } from '../fields/pickers';
import { TASK_OUTPUT_FIELDS, TASK_SAMPLE, taskBodyFrom, taskInputFields, withTaskId, type ZapierTask } from '../fields/task-fields';

/** Updates the task `task_id` with only the provided fields (checked with TaskUpdateSchema); returns it with `id`. */
export async function perform(z: ZObject, bundle: Bundle): Promise<ZapierTask> {
  const taskId = requireId(bundle.inputData.task_id, 'Task ID');
  const body = checkedBody(TaskUpdateSchema, taskBodyFrom(bundle.inputData), 'task update');
  return withTaskId(await sendJson<Task>(z, 'PATCH', apiPath('tasks', taskId), body));
}

export default defineCreate({
  key: 'update_task',
  noun: 'Task',
  display: {
    label: 'Update Task',
    description: 'Updates a task in Stageline: reschedules, reassigns, completes or reopens it. Only the fields you fill in change.',
  },
  operation: {
    inputFields: [
      taskInputField({
        required: true,
        helpText: 'The task to update: choose it from the list (title, due date, assignee), or map the Task ID from a Stageline step.',
      }),
      ...taskInputFields('update'),
    ],
    perform,
    sample: TASK_SAMPLE,
    outputFields: TASK_OUTPUT_FIELDS,
  },
});

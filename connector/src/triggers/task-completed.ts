/**
 * Trigger `task_completed` ("Completed Task"): a REST hook on the `task.completed` event (spec "Events"; CONTRACT
 * "Events and deliveries" and "Tasks"; plumbing in rest-hook.ts). Stageline sends it when a task is created
 * completed or an update sets `is_completed` to true; the body is the task in the Task format, with `completed_at`,
 * plus `changed_fields` and `previous` (CONTRACT "Previous values in update events"; output "Previous Notes", ...).
 * An optional Pipeline becomes the subscription's filter (hook-filter.ts).
 *
 * Output `id` = `${task_id}:${completed_at}`: a task can be reopened and completed again, and Zapier de-duplicates on
 * `id`, so each completion needs its own id; a redelivery of the same completion keeps it and is dropped.
 */
import { defineTrigger } from 'zapier-platform-core';
import type { EventName } from '@stageline/shared';
import { hookFilterInputFields } from '../fields/hook-filter-fields';
import { COMPLETED_TASK_OUTPUT_FIELDS, COMPLETED_TASK_SAMPLE, asCompletedTask, withCompletionId } from '../fields/task-fields';
import { restHookOperations } from './rest-hook';

/** The event this trigger subscribes to. */
export const TASK_COMPLETED_EVENT = 'task.completed' satisfies EventName;

/**
 * The hook functions: subscribe/unsubscribe `task.completed`; `perform` maps a delivered task to
 * `{id: "<task_id>:<completed_at>", ...}`; `performList` shows the newest `task.completed` events of the feed the
 * same way, else the sample task shown as completed.
 */
export const { performSubscribe, performUnsubscribe, perform, performList } = restHookOperations(TASK_COMPLETED_EVENT, {
  toOutput: withCompletionId,
  asPayload: asCompletedTask,
});

export default defineTrigger({
  key: 'task_completed',
  noun: 'Task',
  display: {
    label: 'Completed Task',
    description:
      'Triggers when a task is marked completed in Stageline (instantly, through a REST hook). A task that is reopened and completed again triggers again.',
  },
  operation: {
    type: 'hook',
    inputFields: hookFilterInputFields(TASK_COMPLETED_EVENT),
    performSubscribe,
    performUnsubscribe,
    perform,
    performList,
    sample: COMPLETED_TASK_SAMPLE,
    outputFields: COMPLETED_TASK_OUTPUT_FIELDS,
  },
});

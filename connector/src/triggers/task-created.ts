/**
 * Trigger `task_created` ("New Task"): a REST hook on the `task.created` event (spec "Events"; CONTRACT "Events and
 * deliveries"; plumbing in rest-hook.ts). The body is the task in the Task format. Output `id` = `task_id` (a task
 * is created once). An optional Pipeline becomes the subscription's filter (hook-filter.ts): only tasks linked to an
 * item of that pipeline are sent.
 */
import { defineTrigger } from 'zapier-platform-core';
import type { EventName } from '@stageline/shared';
import { hookFilterInputFields } from '../fields/hook-filter-fields';
import { TASK_OUTPUT_FIELDS, TASK_SAMPLE, withTaskId } from '../fields/task-fields';
import { restHookOperations } from './rest-hook';

/** The event this trigger subscribes to. */
export const TASK_CREATED_EVENT = 'task.created' satisfies EventName;

/**
 * The hook functions: subscribe/unsubscribe `task.created`; `perform` maps a delivered task to `{id: task_id, ...}`;
 * `performList` shows the newest `task.created` events of the feed (of the chosen pipeline) the same way, else the
 * sample task (GET /v1/ext/webhooks/sample/tasks).
 */
export const { performSubscribe, performUnsubscribe, perform, performList } = restHookOperations(TASK_CREATED_EVENT, {
  toOutput: withTaskId,
});

export default defineTrigger({
  key: 'task_created',
  noun: 'Task',
  display: {
    label: 'New Task',
    description:
      'Triggers when a task is created in Stageline (instantly, through a REST hook), by any app or person, including tasks created already completed.',
  },
  operation: {
    type: 'hook',
    inputFields: hookFilterInputFields(TASK_CREATED_EVENT),
    performSubscribe,
    performUnsubscribe,
    perform,
    performList,
    sample: TASK_SAMPLE,
    outputFields: TASK_OUTPUT_FIELDS,
  },
});

/**
 * Trigger `task_updated` ("Updated Task"): a REST hook on the `task.updated` event (spec "Events"; CONTRACT "Events
 * and deliveries" and "Previous values in update events"; plumbing in rest-hook.ts). Stageline sends it for every
 * real change of a task (also when the task's item is deleted and the task unlinked); the body is the task after the
 * change plus `changed_fields` and `previous` (the value before the change of each changed field), shown as
 * "Previous Due At", "Previous Priority", ... Optional inputs Pipeline and "Only when these fields change" become the
 * subscription's filter (hook-filter.ts).
 *
 * Output `id` = `${task_id}:${updated_at}`: every change sets `updated_at`, so each update triggers once and a
 * redelivery of the same update (delivery is at least once) is dropped by Zapier's de-duplication.
 */
import { defineTrigger } from 'zapier-platform-core';
import type { EventName } from '@stageline/shared';
import { hookFilterInputFields } from '../fields/hook-filter-fields';
import { TASK_CHANGE_SAMPLE, TASK_CHANGE_TRIGGER_OUTPUT_FIELDS, asTaskChange, withTaskChangeId } from '../fields/task-fields';
import { restHookOperations } from './rest-hook';

/** The event this trigger subscribes to. */
export const TASK_UPDATED_EVENT = 'task.updated' satisfies EventName;

/**
 * The hook functions: subscribe/unsubscribe `task.updated` (with the step's filter); `perform` maps a delivered change
 * to `{id: "<task_id>:<updated_at>", ...}`; `performList` shows the newest `task.updated` events of the feed the same
 * way, else the sample task as a change without a known last change.
 */
export const { performSubscribe, performUnsubscribe, perform, performList } = restHookOperations(TASK_UPDATED_EVENT, {
  toOutput: withTaskChangeId,
  asPayload: asTaskChange,
});

export default defineTrigger({
  key: 'task_updated',
  noun: 'Task',
  display: {
    label: 'Updated Task',
    description:
      'Triggers when a task is changed in Stageline (instantly, through a REST hook), optionally only when some fields change. Changed Fields lists what changed and the Previous fields what it was before.',
  },
  operation: {
    type: 'hook',
    inputFields: hookFilterInputFields(TASK_UPDATED_EVENT),
    performSubscribe,
    performUnsubscribe,
    perform,
    performList,
    sample: TASK_CHANGE_SAMPLE,
    outputFields: TASK_CHANGE_TRIGGER_OUTPUT_FIELDS,
  },
});

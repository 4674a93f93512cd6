/**
 * The `task` operations (spec "Tasks"; CONTRACT "Lists", "Tasks", "Idempotency"): create (POST /v1/ext/tasks with an
 * Idempotency-Key), update (PATCH), get, getMany (filters, Return All or Limit, paging by Link rel="next") and
 * complete (PATCH `is_completed: true`, which sets `completed_at`).
 */
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import type { Task, TaskCreate, TaskUpdate } from '@stageline/shared';
import { apiPath } from '../../shared/server-url';
import { apiJson, compact, listAll } from '../../shared/transport';
import { TASK_LIST_FILTERS, TASK_WRITE_FIELDS, toContract } from '../descriptions/contract-keys';
import { toOffsetDateTime } from './date-time';
import { createWithKey } from './idempotency-key';
import { pickedValue } from './picker-value';
import { requireChanges } from './require-changes';
import type { OperationHandlers } from './types';

/** Date-time parameters of tasks (sent as ISO 8601 text with an offset). */
const DATE_TIME_PARAMS = ['dueAt', 'dueBefore', 'dueAfter'];

/** Pickers of tasks (resource locators): the item, and the assignee (a user from the list, or any identifier). */
const PICKER_PARAMS = ['itemId', 'assignedTo'];

/**
 * Parameter values with date-times as ISO text with an offset (zone-less ones read in `zone`, the workflow's time
 * zone) and the pickers' values extracted (an assignee saved as text before it was a picker stays as it was).
 */
function normalise(values: IDataObject, zone: string): IDataObject {
	const out: IDataObject = { ...values };
	for (const name of DATE_TIME_PARAMS) {
		if (name in out) out[name] = toOffsetDateTime(out[name], zone);
	}
	for (const name of PICKER_PARAMS) {
		if (name in out) out[name] = pickedValue(out[name]) as IDataObject[string];
	}
	return out;
}

/** The task id of the picker at `itemIndex`. */
function taskIdAt(context: IExecuteFunctions, itemIndex: number): string {
	return String(context.getNodeParameter('taskId', itemIndex, '', { extractValue: true })).trim();
}

/** The create body of the input item at `itemIndex`: title, due date, assignee and additional fields. */
export function taskCreateBodyAt(context: IExecuteFunctions, itemIndex: number): TaskCreate {
	const values = normalise({
		title: context.getNodeParameter('title', itemIndex),
		dueAt: context.getNodeParameter('dueAt', itemIndex),
		assignedTo: context.getNodeParameter('assignedTo', itemIndex),
		...(context.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject),
	}, context.getTimezone());
	return toContract(TASK_WRITE_FIELDS, values) as TaskCreate;
}

/** The task and the PATCH body of the update of the input item at `itemIndex`. @throws NodeOperationError when nothing would change. */
export function taskUpdateAt(context: IExecuteFunctions, itemIndex: number): { taskId: string; body: TaskUpdate } {
	const values = normalise(context.getNodeParameter('updateFields', itemIndex, {}) as IDataObject, context.getTimezone());
	const body = toContract(TASK_WRITE_FIELDS, values) as TaskUpdate;
	requireChanges(context, body, itemIndex);
	return { taskId: taskIdAt(context, itemIndex), body };
}

export const taskHandlers: OperationHandlers = {
	async create(this: IExecuteFunctions, itemIndex: number): Promise<object> {
		return createWithKey<Task>(this, apiPath('tasks'), taskCreateBodyAt(this, itemIndex), 'task:create', itemIndex);
	},

	async update(this: IExecuteFunctions, itemIndex: number): Promise<object> {
		const { taskId, body } = taskUpdateAt(this, itemIndex);
		return apiJson<Task>(this, { method: 'PATCH', url: apiPath('tasks', taskId), body: body as IDataObject, itemIndex });
	},

	async get(this: IExecuteFunctions, itemIndex: number): Promise<object> {
		return apiJson<Task>(this, { url: apiPath('tasks', taskIdAt(this, itemIndex)), itemIndex });
	},

	async getMany(this: IExecuteFunctions, itemIndex: number): Promise<object[]> {
		const filters = normalise(this.getNodeParameter('filters', itemIndex, {}) as IDataObject, this.getTimezone());
		const returnAll = this.getNodeParameter('returnAll', itemIndex, false) as boolean;
		const limit = returnAll ? undefined : (this.getNodeParameter('limit', itemIndex, 50) as number);
		const qs = compact(toContract(TASK_LIST_FILTERS, filters) as IDataObject);
		return listAll<Task>(this, { url: apiPath('tasks'), qs, itemIndex }, limit);
	},

	async complete(this: IExecuteFunctions, itemIndex: number): Promise<object> {
		const body: TaskUpdate = { is_completed: true };
		const url = apiPath('tasks', taskIdAt(this, itemIndex));
		return apiJson<Task>(this, { method: 'PATCH', url, body: body as IDataObject, itemIndex });
	},
};

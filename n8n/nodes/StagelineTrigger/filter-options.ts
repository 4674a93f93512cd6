/**
 * The trigger's filter dropdowns (`loadOptions`): Stage ("Any Stage" first, then the stages of the chosen pipeline) and
 * "Only When These Fields Change" (for Item Updated: the built-in item fields and the custom fields of the chosen
 * pipeline, or of every pipeline; for Task Updated: the task fields; for Note Updated: body and pinned), each value
 * prefixed `item:` / `task:` / `note:` (filter.ts).
 */
import type { ILoadOptionsFunctions, INodePropertyOptions } from 'n8n-workflow';
import type { Pipeline, PipelineField } from '@stageline/shared';
import { apiPath } from '../shared/server-url';
import { apiJson, listAll } from '../shared/transport';
import { currentValue, getStages } from '../Stageline/methods/loadOptions';
import { ITEM_CHANGE_FIELDS, NOTE_CHANGE_FIELDS, TASK_CHANGE_FIELDS } from './filter';

/** The option meaning "no stage filter". */
export const ANY_STAGE: INodePropertyOptions = { name: 'Any Stage', value: '' };

/** Labels of the built-in item and task fields. */
const LABELS: Record<string, string> = {
	name: 'Name',
	stage: 'Stage',
	status: 'Status',
	contact_id: 'Contact ID',
	source: 'Source',
	title: 'Title',
	description: 'Description',
	due_at: 'Due At',
	priority: 'Priority',
	is_completed: 'Is Completed',
	completed_at: 'Completed At',
	task_type: 'Task Type',
	assigned_to: 'Assigned To',
	item_id: 'Item ID',
	notes: 'Notes',
	duration_minutes: 'Duration (Minutes)',
	reminder_minutes: 'Reminder (Minutes)',
	body: 'Body',
	pinned: 'Pinned',
};

/** [Any Stage, ...stages of the chosen pipeline]. @throws NodeApiError as the transport does. */
export async function getStageFilter(this: ILoadOptionsFunctions): Promise<INodePropertyOptions[]> {
	return [ANY_STAGE, ...(await getStages.call(this))];
}

/** The custom fields of the chosen pipeline, or of every pipeline (first definition of a key wins). */
async function customFields(context: ILoadOptionsFunctions): Promise<PipelineField[]> {
	const pipelineId = currentValue(context, 'pipelineId');
	const ids = pipelineId !== '' ? [pipelineId] : (await listAll<Pipeline>(context, { url: apiPath('pipelines') })).map((p) => p.id);
	const byKey = new Map<string, PipelineField>();
	for (const id of ids) {
		for (const field of await apiJson<PipelineField[]>(context, { url: apiPath('pipelines', id, 'fields') })) {
			if (!byKey.has(field.key)) byKey.set(field.key, field);
		}
	}
	return [...byKey.values()];
}

/** The choices of "Only When These Fields Change" for the chosen events (none unless Item Updated or Task Updated). */
export async function getChangedFieldFilter(this: ILoadOptionsFunctions): Promise<INodePropertyOptions[]> {
	let events: unknown = [];
	try {
		events = this.getCurrentNodeParameter('events');
	} catch {
		// not set yet
	}
	const chosen = Array.isArray(events) ? (events as string[]) : [];
	const options: INodePropertyOptions[] = [];
	if (chosen.includes('item.updated')) {
		for (const key of ITEM_CHANGE_FIELDS) options.push({ name: `Item: ${LABELS[key]}`, value: `item:${key}` });
		for (const field of await customFields(this)) options.push({ name: `Item: ${field.label}`, value: `item:${field.key}` });
	}
	if (chosen.includes('task.updated')) {
		for (const key of TASK_CHANGE_FIELDS) options.push({ name: `Task: ${LABELS[key]}`, value: `task:${key}` });
	}
	if (chosen.includes('note.updated')) {
		for (const key of NOTE_CHANGE_FIELDS) options.push({ name: `Note: ${LABELS[key]}`, value: `note:${key}` });
	}
	return options;
}

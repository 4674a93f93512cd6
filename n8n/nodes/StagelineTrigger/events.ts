/**
 * The events the Stageline triggers offer (CONTRACT "Events and deliveries", "Notes"): the Stageline Trigger's
 * subscriptions and the Stageline Polling Trigger's `event` filter of the events feed (CONTRACT "Events feed").
 */
import type { INodeProperties } from 'n8n-workflow';
import type { EventName } from '@stageline/shared';

/** The ten events (CONTRACT "Events and deliveries", "Notes"; test/trigger-contract.test.ts checks them against EVENT_NAMES). */
export const TRIGGER_EVENTS: ReadonlyArray<{ name: string; value: EventName; description: string }> = [
	{ name: 'Item Created', value: 'item.created', description: 'A new item was created' },
	{ name: 'Item Updated', value: 'item.updated', description: 'An item changed (any field)' },
	{ name: 'Item Stage Changed', value: 'item.stage_changed', description: 'An item moved to another stage' },
	{ name: 'Item Deleted', value: 'item.deleted', description: 'An item was deleted (its last values and deleted_at)' },
	{ name: 'Task Created', value: 'task.created', description: 'A new task was created' },
	{ name: 'Task Updated', value: 'task.updated', description: 'A task changed' },
	{ name: 'Task Completed', value: 'task.completed', description: 'A task was marked completed' },
	{ name: 'Note Created', value: 'note.created', description: 'A note was added to an item' },
	{ name: 'Note Updated', value: 'note.updated', description: 'A note\'s text or pin changed' },
	{ name: 'Note Deleted', value: 'note.deleted', description: 'A note was deleted (its last values and deleted_at)' },
];

/** The triggers' Events parameter (`events`, required, default Item Created); `description` says what a choice does. */
export function eventsProperty(description: string): INodeProperties {
	return {
		displayName: 'Events',
		name: 'events',
		type: 'multiOptions',
		required: true,
		options: [...TRIGGER_EVENTS],
		default: ['item.created'],
		description,
	};
}

/**
 * The triggers' Pipeline parameter (`pipelineId`, "All Pipelines" first: pipeline-filter.ts).
 * @param how a sentence on where the filter applies (e.g. "Stageline filters before sending."), or ''.
 */
export function pipelineFilterProperty(how: string): INodeProperties {
	return {
		displayName: 'Pipeline Name or ID',
		name: 'pipelineId',
		type: 'options',
		typeOptions: { loadOptionsMethod: 'getPipelineFilter' },
		default: '',
		description: `Only events of this pipeline start the workflow: item events of its items, note events of notes on its items, task events of tasks linked to one of its items (a task without an item then never starts it). All Pipelines for no filter.${how === '' ? '' : ` ${how}`} Choose from the list, or specify an ID using an <a href="https://docs.n8n.io/code/expressions/">expression</a>.`,
	};
}

/**
 * Parameters of the `task` resource (spec "Tasks", "Task write fields"; CONTRACT "Lists", "Tasks"): Create, Update,
 * Get, Get Many, Complete.
 */
import type { INodeProperties } from 'n8n-workflow';
import { TASK_PRIORITIES, TASK_TYPES } from './contract-keys';
import { idempotencyKeyOption, operationsOf, picker, returnAllAndLimit, showFor, userPicker } from './common';

const show = (operations: string[]) => showFor('task', operations);

/** "to_do" → "To Do". */
const label = (value: string) => value.split('_').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join(' ');

/** The optional task write fields, shared by "Additional Fields" (create) and "Update Fields" (update). */
function optionalTaskFields(): INodeProperties[] {
	return [
		{ displayName: 'Description', name: 'description', type: 'string', typeOptions: { rows: 3 }, default: '' },
		{
			displayName: 'Duration (Minutes)',
			name: 'durationMinutes',
			type: 'number',
			typeOptions: { minValue: 0 },
			default: 30,
		},
		{
			displayName: 'Is Completed',
			name: 'isCompleted',
			type: 'boolean',
			default: false,
			description: 'Whether the task is done (sets or clears its completion time)',
		},
		{
			displayName: 'Item ID',
			name: 'itemId',
			type: 'string',
			default: '',
			description: 'ID of the item the task belongs to',
		},
		{ displayName: 'Notes', name: 'notes', type: 'string', typeOptions: { rows: 3 }, default: '' },
		{
			displayName: 'Priority',
			name: 'priority',
			type: 'options',
			options: TASK_PRIORITIES.map((value) => ({ name: label(value), value })),
			default: 'none',
		},
		{
			displayName: 'Reminder (Minutes Before)',
			name: 'reminderMinutes',
			type: 'number',
			typeOptions: { minValue: 0 },
			default: 15,
		},
		{
			displayName: 'Task Type',
			name: 'taskType',
			type: 'options',
			options: TASK_TYPES.map((value) => ({ name: label(value), value })),
			default: 'to_do',
		},
	];
}

export const taskOperations: INodeProperties[] = operationsOf(
	'task',
	[
		{ name: 'Complete', value: 'complete', description: 'Mark a task as done', action: 'Complete a task' },
		{ name: 'Create', value: 'create', description: 'Create a task', action: 'Create a task' },
		{ name: 'Get', value: 'get', description: 'Get a task', action: 'Get a task' },
		{ name: 'Get Many', value: 'getMany', description: 'List tasks', action: 'Get many tasks' },
		{ name: 'Update', value: 'update', description: 'Update a task', action: 'Update a task' },
	],
	'create',
);

export const taskFields: INodeProperties[] = [
	{
		displayName: 'Title',
		name: 'title',
		type: 'string',
		required: true,
		default: '',
		displayOptions: show(['create']),
	},
	{
		displayName: 'Due At',
		name: 'dueAt',
		type: 'dateTime',
		required: true,
		default: '',
		description: 'When the task is due',
		displayOptions: show(['create']),
	},
	userPicker('Assigned To', 'assignedTo', {
		required: true,
		description: 'Who does the task: a user of your company from the list, or another identifier',
		displayOptions: show(['create']),
	}),
	{
		displayName: 'Additional Fields',
		name: 'additionalFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		displayOptions: show(['create']),
		options: [...optionalTaskFields(), idempotencyKeyOption()].sort((a, b) => a.displayName.localeCompare(b.displayName)),
	},
	picker('Task', 'taskId', 'searchTasks', { required: true, displayOptions: show(['get', 'update', 'complete']) }),
	{
		displayName: 'Update Fields',
		name: 'updateFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		displayOptions: show(['update']),
		options: ([
			userPicker('Assigned To', 'assignedTo'),
			{ displayName: 'Due At', name: 'dueAt', type: 'dateTime', default: '' },
			{ displayName: 'Title', name: 'title', type: 'string', default: '' },
			...optionalTaskFields(),
		] as INodeProperties[]).sort((a, b) => a.displayName.localeCompare(b.displayName)),
	},
	...returnAllAndLimit('task', 'getMany'),
	{
		displayName: 'Filters',
		name: 'filters',
		type: 'collection',
		placeholder: 'Add Filter',
		default: {},
		displayOptions: show(['getMany']),
		options: [
			userPicker('Assigned To', 'assignedTo'),
			{ displayName: 'Due After', name: 'dueAfter', type: 'dateTime', default: '' },
			{ displayName: 'Due Before', name: 'dueBefore', type: 'dateTime', default: '' },
			{
				displayName: 'Completion',
				name: 'isCompleted',
				type: 'options',
				options: [
					{ name: 'Completed', value: 'true' },
					{ name: 'Open', value: 'false' },
				],
				default: 'false',
			},
			picker('Item', 'itemId', 'searchItems'),
		],
	},
];

/**
 * Parameters of the `item` resource (spec "Items", CONTRACT "Lists", "Duplicate check", "Item deletion and erasure" and
 * "Upsert"): Create, Create or Update (same parameters as Create), Update, Delete, Get, Get Many, Find, Check Duplicates. Create item parameters are named `pipelineId`, `stageId`, `statusId`, `name`
 * (issue 18); custom fields come from the pipeline's blueprint through the resource mapper (methods/resourceMapping.ts).
 */
import type { INodeProperties } from 'n8n-workflow';
import { dropdown, idempotencyKeyOption, operationsOf, picker, returnAllAndLimit, showFor, versionOption } from './common';

const show = (operations: string[]) => showFor('item', operations);

export const itemOperations: INodeProperties[] = operationsOf(
	'item',
	[
		{
			name: 'Check Duplicates',
			value: 'checkDuplicates',
			description: "Find items of a pipeline that match a name or custom field values (the pipeline's duplicate rules); one output item with the matches and their count",
			action: 'Check for duplicate items',
		},
		{ name: 'Create', value: 'create', description: 'Create an item in a pipeline', action: 'Create an item' },
		{
			name: 'Create or Update',
			value: 'upsert',
			description: 'Create a new record, or update the current one if it already exists (upsert)',
			action: 'Create or update an item',
		},
		{ name: 'Delete', value: 'delete', description: 'Delete an item for good (its values are erased; its tasks stay, unlinked)', action: 'Delete an item' },
		{
			name: 'Find',
			value: 'find',
			description: 'Find items by short ID or exact name',
			action: 'Find items',
		},
		{ name: 'Get', value: 'get', description: 'Get an item', action: 'Get an item' },
		{ name: 'Get Many', value: 'getMany', description: 'List items, newest first', action: 'Get many items' },
		{ name: 'Update', value: 'update', description: 'Update an item', action: 'Update an item' },
	],
	'create',
);

/** The custom fields of the pipeline's blueprint (resource mapper), for create, update and duplicate check. */
function customFields(operations: string[], method: string, dependsOn: string[]): INodeProperties {
	return {
		displayName: 'Custom Fields',
		name: 'customFields',
		type: 'resourceMapper',
		noDataExpression: true,
		default: { mappingMode: 'defineBelow', value: null },
		typeOptions: {
			loadOptionsDependsOn: dependsOn,
			resourceMapper: {
				resourceMapperMethod: method,
				mode: 'add',
				fieldWords: { singular: 'custom field', plural: 'custom fields' },
				addAllFields: true,
				multiKeyMatch: false,
				supportAutoMap: true,
			},
		},
		displayOptions: show(operations),
	};
}

export const itemFields: INodeProperties[] = [
	// create, create or update (upsert) and check duplicates
	dropdown('Pipeline Name or ID', 'pipelineId', 'getPipelines', [], {
		required: true,
		displayOptions: show(['create', 'upsert', 'checkDuplicates']),
	}),
	dropdown('Stage Name or ID', 'stageId', 'getStages', ['pipelineId'], {
		required: true,
		displayOptions: show(['create', 'upsert']),
	}),
	dropdown('Status Name or ID', 'statusId', 'getStatuses', ['pipelineId', 'stageId'], {
		displayOptions: show(['create', 'upsert']),
		description:
			'The status of the new item (empty: the stage\'s first status). Choose from the list, or specify an ID using an <a href="https://docs.n8n.io/code/expressions/">expression</a>.',
	}),
	{
		displayName: 'Name',
		name: 'name',
		type: 'string',
		required: true,
		default: '',
		description: 'Name of the item (1 to 255 characters)',
		displayOptions: show(['create', 'upsert']),
	},
	{
		displayName: 'Name',
		name: 'name',
		type: 'string',
		default: '',
		description: 'Name to compare with existing items (exact, ignoring case and surrounding spaces)',
		displayOptions: show(['checkDuplicates']),
	},
	customFields(['create', 'upsert'], 'getCustomFieldsForCreate', ['pipelineId']),
	customFields(['checkDuplicates'], 'getCustomFieldsForMatch', ['pipelineId']),
	{
		displayName: 'Additional Fields',
		name: 'additionalFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		displayOptions: show(['create', 'upsert', 'checkDuplicates']),
		options: [
			{ displayName: 'Contact ID', name: 'contactId', type: 'string', default: '', description: 'ID of a contact to link' },
			idempotencyKeyOption(),
			{
				displayName: 'Source',
				name: 'source',
				type: 'string',
				default: 'n8n',
				description: 'Where the item came from (Stageline shows it on the item; empty: n8n)',
			},
		],
	},

	// get, update, delete
	picker('Item', 'itemId', 'searchItems', { required: true, displayOptions: show(['get', 'update', 'delete']) }),
	{
		displayName: 'Options',
		name: 'deleteOptions',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		displayOptions: show(['delete']),
		options: [versionOption('Delete only if the item still has this version (else the node fails with a conflict and the item stays)')],
	},
	customFields(['update'], 'getCustomFieldsForUpdate', ['itemId.value']),
	{
		displayName: 'Update Fields',
		name: 'updateFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		displayOptions: show(['update']),
		options: [
			{ displayName: 'Contact ID', name: 'contactId', type: 'string', default: '', description: 'ID of a contact to link' },
			{ displayName: 'Name', name: 'name', type: 'string', default: '', description: 'New name of the item' },
			{ displayName: 'Source', name: 'source', type: 'string', default: '', description: 'Where the item came from' },
			dropdown('Stage Name or ID', 'stageId', 'getStages', ['itemId.value'], {
				description:
					'Move the item to this stage of its pipeline. Choose from the list, or specify an ID using an <a href="https://docs.n8n.io/code/expressions/">expression</a>.',
			}),
			dropdown('Status Name or ID', 'statusId', 'getStatuses', ['itemId.value', 'updateFields.stageId'], {
				description:
					'A status of the item\'s (new) stage. Choose from the list, or specify an ID using an <a href="https://docs.n8n.io/code/expressions/">expression</a>.',
			}),
			versionOption('Update only if the item still has this version (else the node fails with a conflict)'),
		],
	},

	// find
	{
		displayName: 'Find By',
		name: 'findBy',
		type: 'options',
		options: [
			{ name: 'Name', value: 'name', description: 'The exact name, ignoring case and surrounding spaces' },
			{ name: 'Short ID', value: 'shortId', description: 'Such as SALES-42' },
		],
		default: 'shortId',
		displayOptions: show(['find']),
	},
	{
		displayName: 'Value',
		name: 'findValue',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. SALES-42',
		description: 'The short ID or name to find',
		displayOptions: show(['find']),
	},
	dropdown('Pipeline Name or ID', 'findPipelineId', 'getPipelines', [], {
		displayOptions: show(['find']),
		description:
			'Only items of this pipeline (empty: every pipeline). Choose from the list, or specify an ID using an <a href="https://docs.n8n.io/code/expressions/">expression</a>.',
	}),

	// get many
	...returnAllAndLimit('item', 'getMany'),
	{
		displayName: 'Filters',
		name: 'filters',
		type: 'collection',
		placeholder: 'Add Filter',
		default: {},
		displayOptions: show(['getMany']),
		options: [
			{
				displayName: 'Created After',
				name: 'createdAfter',
				type: 'dateTime',
				default: '',
				description: 'Only items created after this moment',
			},
			{ displayName: 'Name', name: 'name', type: 'string', default: '', description: 'Exact name, ignoring case' },
			dropdown('Pipeline Name or ID', 'pipelineId', 'getPipelines', []),
			{
				displayName: 'Search',
				name: 'search',
				type: 'string',
				default: '',
				description: 'Part of the name (2 to 100 characters, ignoring case)',
			},
			{ displayName: 'Short ID', name: 'shortId', type: 'string', default: '', placeholder: 'e.g. SALES-42' },
			dropdown('Stage Name or ID', 'stageId', 'getStages', ['filters.pipelineId']),
			dropdown('Status Name or ID', 'statusId', 'getStatuses', ['filters.pipelineId', 'filters.stageId']),
			{
				displayName: 'Updated After',
				name: 'updatedAfter',
				type: 'dateTime',
				default: '',
				description: 'Only items changed after this moment',
			},
		],
	},
];

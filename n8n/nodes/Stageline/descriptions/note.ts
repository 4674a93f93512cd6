/**
 * Parameters of the `note` resource (CONTRACT "Notes": the conversation around an item): Create (item, body,
 * pinned), Get, Get Many (filters item, pinned, updated after; Return All or Limit), Update (body, pinned, version),
 * Delete (optional version).
 */
import type { INodeProperties } from 'n8n-workflow';
import { NOTE_BODY_MAX } from './contract-keys';
import { idempotencyKeyOption, operationsOf, picker, returnAllAndLimit, showFor, versionOption } from './common';

const show = (operations: string[]) => showFor('note', operations);

const BODY_DESCRIPTION = `The note's text, Markdown (1 to ${NOTE_BODY_MAX.toLocaleString('en-US')} characters)`;

/** The Version option of Update and Delete: optimistic locking, as for items. */
const noteVersion = (what: string) => versionOption(`${what} only if the note still has this version (else the node fails with a conflict)`);

export const noteOperations: INodeProperties[] = operationsOf(
	'note',
	[
		{ name: 'Create', value: 'create', description: 'Add a note to an item', action: 'Create a note' },
		{ name: 'Delete', value: 'delete', description: 'Delete a note for good (its text is erased)', action: 'Delete a note' },
		{ name: 'Get', value: 'get', description: 'Get a note', action: 'Get a note' },
		{ name: 'Get Many', value: 'getMany', description: 'List notes, newest first', action: 'Get many notes' },
		{ name: 'Update', value: 'update', description: 'Change a note\'s text or pin it', action: 'Update a note' },
	],
	'create',
);

export const noteFields: INodeProperties[] = [
	// create
	picker('Item', 'itemId', 'searchItems', { required: true, description: 'The item the note is about', displayOptions: show(['create']) }),
	{
		displayName: 'Body',
		name: 'body',
		type: 'string',
		typeOptions: { rows: 5 },
		required: true,
		default: '',
		description: BODY_DESCRIPTION,
		displayOptions: show(['create']),
	},
	{
		displayName: 'Additional Fields',
		name: 'additionalFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		displayOptions: show(['create']),
		options: [
			idempotencyKeyOption(),
			{
				displayName: 'Pinned',
				name: 'pinned',
				type: 'boolean',
				default: false,
				description: 'Whether the note stays on top of the item\'s notes',
			},
		],
	},

	// get, update, delete
	{
		displayName: 'Note ID',
		name: 'noteId',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. 3f0c…',
		description: 'The note_id of the note (from Create, Get Many or a Note trigger event)',
		displayOptions: show(['get', 'update', 'delete']),
	},
	{
		displayName: 'Update Fields',
		name: 'updateFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		displayOptions: show(['update']),
		options: [
			{ displayName: 'Body', name: 'body', type: 'string', typeOptions: { rows: 5 }, default: '', description: BODY_DESCRIPTION },
			{
				displayName: 'Pinned',
				name: 'pinned',
				type: 'boolean',
				default: false,
				description: 'Whether the note stays on top of the item\'s notes',
			},
			noteVersion('Update'),
		],
	},
	{
		displayName: 'Options',
		name: 'deleteOptions',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		displayOptions: show(['delete']),
		options: [noteVersion('Delete')],
	},

	// get many
	...returnAllAndLimit('note', 'getMany'),
	{
		displayName: 'Filters',
		name: 'filters',
		type: 'collection',
		placeholder: 'Add Filter',
		default: {},
		displayOptions: show(['getMany']),
		options: [
			picker('Item', 'itemId', 'searchItems'),
			{
				displayName: 'Pinned',
				name: 'pinned',
				type: 'options',
				options: [
					{ name: 'Pinned', value: 'true' },
					{ name: 'Not Pinned', value: 'false' },
				],
				default: 'true',
			},
			{
				displayName: 'Updated After',
				name: 'updatedAfter',
				type: 'dateTime',
				default: '',
				description: 'Only notes changed after this moment',
			},
		],
	},
];

/**
 * Parameter builders shared by the resources' descriptions: dropdowns of pipelines, stages and statuses, pickers of
 * items, tasks and users (resource locators with `listSearch`), Return All / Limit.
 */
import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';

/** The linter's wording for dropdowns whose value may also be an ID given by an expression. */
export const CHOOSE_OR_ID =
	'Choose from the list, or specify an ID using an <a href="https://docs.n8n.io/code/expressions/">expression</a>';

/** `displayOptions` for a resource and some of its operations. */
export function showFor(resource: string, operations: string[]): INodeProperties['displayOptions'] {
	return { show: { resource: [resource], operation: operations } };
}

/** A dropdown filled by `loadOptionsMethod`, refilled when the `dependsOn` parameters change. */
export function dropdown(
	displayName: string,
	name: string,
	method: string,
	dependsOn: string[],
	extra: Partial<INodeProperties> = {},
): INodeProperties {
	return {
		displayName,
		name,
		type: 'options',
		typeOptions: dependsOn.length > 0 ? { loadOptionsMethod: method, loadOptionsDependsOn: dependsOn } : { loadOptionsMethod: method },
		default: '',
		description: CHOOSE_OR_ID,
		...extra,
	};
}

/** The typed-in mode of a picker. */
interface IdMode {
	displayName: string;
	placeholder: string;
}

/** A picker of one item or task: searchable list (paged) or an ID (`idMode`: how the typed-in mode is labelled). */
export function picker(
	displayName: string,
	name: string,
	searchListMethod: string,
	extra: Partial<INodeProperties> = {},
	idMode: IdMode = { displayName: 'ID', placeholder: 'e.g. 3f0c…' },
): INodeProperties {
	return {
		displayName,
		name,
		type: 'resourceLocator',
		default: { mode: 'list', value: '' },
		modes: [
			{
				displayName: 'From List',
				name: 'list',
				type: 'list',
				typeOptions: { searchListMethod, searchable: true },
			},
			{ displayName: idMode.displayName, name: 'id', type: 'string', placeholder: idMode.placeholder },
		],
		...extra,
	};
}

/**
 * The picker of a task's assignee (CONTRACT "People"): a user of the company from the list (GET /v1/ext/users; the
 * value is the `user_id`, so the task's `assignee` shows the person), or any other identifier typed in (CONTRACT
 * "Tasks": `assigned_to` is a free identifier), as before the list existed.
 */
export function userPicker(displayName: string, name: string, extra: Partial<INodeProperties> = {}): INodeProperties {
	return picker(displayName, name, 'searchUsers', extra, { displayName: 'ID or Other Identifier', placeholder: 'e.g. maria@acme.example' });
}

/** The Version option of an update or delete (optimistic locking, CONTRACT "Responses" / "Notes"). */
export function versionOption(description: string): INodeProperties {
	return { displayName: 'Version', name: 'version', type: 'number', typeOptions: { minValue: 1 }, default: 1, description };
}

/** Return All and Limit for a list operation. */
export function returnAllAndLimit(resource: string, operation: string): INodeProperties[] {
	return [
		{
			displayName: 'Return All',
			name: 'returnAll',
			type: 'boolean',
			default: false,
			description: 'Whether to return all results or only up to a given limit',
			displayOptions: showFor(resource, [operation]),
		},
		{
			displayName: 'Limit',
			name: 'limit',
			type: 'number',
			typeOptions: { minValue: 1 },
			default: 50,
			description: 'Max number of results to return',
			displayOptions: { show: { resource: [resource], operation: [operation], returnAll: [false] } },
		},
	];
}

/** The Operation parameter of `resource`, with its operations (options sorted by name, as the linter wants). */
export function operationsOf(resource: string, options: INodePropertyOptions[], defaultOperation: string): INodeProperties[] {
	return [
		{
			displayName: 'Operation',
			name: 'operation',
			type: 'options',
			noDataExpression: true,
			displayOptions: { show: { resource: [resource] } },
			options,
			default: defaultOperation,
		},
	];
}

/**
 * The Additional Field "Idempotency Key" of creates (CONTRACT "Idempotency": 1..255 printable ASCII characters),
 * shown on Create and Create or Update only. It replaces the derived key (actions/idempotency-key.ts), so a retry from the executions
 * list (a new execution id) can resend the key of the first attempt, e.g. an expression of the input item's id.
 */
export function idempotencyKeyOption(): INodeProperties {
	return {
		displayName: 'Idempotency Key',
		name: 'idempotencyKey',
		type: 'string',
		default: '',
		placeholder: 'e.g. {{ $json.order_id }}',
		description:
			'Key Stageline uses to create once (kept 24 hours). Empty: derived from the execution, node, run and item, so Retry On Fail creates once but a retried execution creates again. Set it (e.g. from an ID of the input item) to create once across executions.',
		displayOptions: { show: { '/operation': ['create', 'upsert'] } },
	};
}

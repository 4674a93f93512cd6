/**
 * Node `Stageline` (type `stageline`, issue 18): items, tasks, notes (issue 30) and pipelines of the Stageline
 * external API (spec "Endpoints"; CONTRACT "Notes"). Programmatic: each input item runs one operation (actions/*), whose errors become that item's
 * output `{ error, details: { description, httpCode } }` under On Error → Continue (regular output) or Continue
 * (using error output) (the error branch). Several input items of Item → Create, Update, Create or Update and
 * Task → Create, Update go as batches of up to 100 (actions/batch.ts; CONTRACT "Batch writes"), each result
 * mapped back to its input item.
 */
import {
	NodeApiError,
	NodeConnectionTypes,
	NodeOperationError,
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
} from 'n8n-workflow';
import { asNodeError, BATCHABLE, runBatched } from './actions/batch';
import { itemHandlers } from './actions/item';
import { noteHandlers } from './actions/note';
import { pipelineHandlers } from './actions/pipeline';
import { taskHandlers } from './actions/task';
import type { OperationHandlers } from './actions/types';
import { itemFields, itemOperations } from './descriptions/item';
import { noteFields, noteOperations } from './descriptions/note';
import { pipelineFields, pipelineOperations } from './descriptions/pipeline';
import { taskFields, taskOperations } from './descriptions/task';
import { getPipelines, getStages, getStatuses } from './methods/loadOptions';
import { searchItems, searchTasks, searchUsers } from './methods/listSearch';
import {
	getCustomFieldsForCreate,
	getCustomFieldsForMatch,
	getCustomFieldsForUpdate,
} from './methods/resourceMapping';
import { AUTHENTICATION_PROPERTY, NODE_CREDENTIALS } from '../shared/authentication';

/** Operation handlers by resource. */
const HANDLERS: Record<string, OperationHandlers> = {
	item: itemHandlers,
	task: taskHandlers,
	note: noteHandlers,
	pipeline: pipelineHandlers,
};

export class Stageline implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Stageline',
		name: 'stageline',
		icon: { light: 'file:stageline.svg', dark: 'file:stageline.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle: '={{$parameter["operation"] + ": " + $parameter["resource"]}}',
		description: 'Create, update and find items, tasks and notes in Stageline pipelines',
		defaults: { name: 'Stageline' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: NODE_CREDENTIALS,
		properties: [
			AUTHENTICATION_PROPERTY,
			{
				displayName: 'Resource',
				name: 'resource',
				type: 'options',
				noDataExpression: true,
				options: [
					{ name: 'Item', value: 'item' },
					{ name: 'Note', value: 'note' },
					{ name: 'Pipeline', value: 'pipeline' },
					{ name: 'Task', value: 'task' },
				],
				default: 'item',
			},
			...itemOperations,
			...itemFields,
			...taskOperations,
			...taskFields,
			...noteOperations,
			...noteFields,
			...pipelineOperations,
			...pipelineFields,
		],
	};

	methods = {
		loadOptions: { getPipelines, getStages, getStatuses },
		listSearch: { searchItems, searchTasks, searchUsers },
		resourceMapping: { getCustomFieldsForCreate, getCustomFieldsForUpdate, getCustomFieldsForMatch },
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const items = this.getInputData();
		// several items of a batchable operation: one request per batch of up to 100 (actions/batch.ts); resource and
		// operation take no expressions, so item 0's are every item's
		const batchOf = items.length > 1 ? `${this.getNodeParameter('resource', 0) as string}:${this.getNodeParameter('operation', 0) as string}` : '';
		const [batchResource = '', batchOperation = ''] = batchOf.split(':');
		const batchable = BATCHABLE[batchResource]?.[batchOperation];
		if (batchable !== undefined) {
			const outcomes = await runBatched(this, batchable, batchOf, items.length, !this.continueOnFail());
			const out: INodeExecutionData[] = [];
			outcomes.forEach((outcome, itemIndex) => {
				out.push(outcome.ok ? { json: outcome.json, pairedItem: { item: itemIndex } } : failureItem(this, outcome.error, itemIndex));
			});
			return [out];
		}
		const out: INodeExecutionData[] = [];
		for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
			try {
				const resource = this.getNodeParameter('resource', itemIndex) as string;
				const operation = this.getNodeParameter('operation', itemIndex) as string;
				const handler = HANDLERS[resource]?.[operation];
				if (handler === undefined) {
					throw new NodeOperationError(this.getNode(), `Unknown operation ${resource}: ${operation}`, { itemIndex });
				}
				const result = await handler.call(this, itemIndex);
				const results = (Array.isArray(result) ? result : [result]) as IDataObject[];
				for (const json of results) out.push({ json, pairedItem: { item: itemIndex } });
			} catch (error) {
				out.push(failureItem(this, asNodeError(this, error, itemIndex), itemIndex));
			}
		}
		return [out];
	}
}

/**
 * The output item of a failed input item under Continue On Fail.
 * @throws the failure itself without Continue On Fail (the node then stops).
 */
function failureItem(context: IExecuteFunctions, failure: NodeApiError | NodeOperationError, itemIndex: number): INodeExecutionData {
	if (!context.continueOnFail()) throw failure;
	// JSON of only `error` and `details`: under "Continue (using error output)" n8n-core's handleNodeErrorOutput
	// moves such items to the error branch (it routes items whose JSON keys are all error/message/details);
	// under "Continue" they stay on the regular output. The item's `error` member is not set: n8n-core's
	// normalizeNodeErrors would then replace the JSON by `{ error }` and drop the details.
	return {
		json: {
			error: failure.message,
			details: {
				description: failure.description ?? null,
				httpCode: failure instanceof NodeApiError ? (failure.httpCode ?? null) : null,
			},
		},
		pairedItem: { item: itemIndex },
	};
}

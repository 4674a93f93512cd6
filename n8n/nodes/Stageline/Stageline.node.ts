/**
 * Node `Stageline` (type `stageline`, issue 18): items, tasks, notes (issue 30) and pipelines of the Stageline
 * external API (spec "Endpoints"; CONTRACT "Notes"). Programmatic: each input item runs one operation (actions/*), whose errors become that item's
 * output `{ error, details: { description, httpCode } }` under On Error → Continue (regular output) or Continue
 * (using error output) (the error branch).
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
		credentials: [{ name: 'stagelineApi', required: true }],
		properties: [
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
				const failure =
					error instanceof NodeApiError || error instanceof NodeOperationError
						? error
						: new NodeOperationError(this.getNode(), error as Error, { itemIndex });
				if (!this.continueOnFail()) throw failure;
				// JSON of only `error` and `details`: under "Continue (using error output)" n8n-core's handleNodeErrorOutput
				// moves such items to the error branch (it routes items whose JSON keys are all error/message/details);
				// under "Continue" they stay on the regular output. The item's `error` member is not set: n8n-core's
				// normalizeNodeErrors would then replace the JSON by `{ error }` and drop the details.
				out.push({
					json: {
						error: failure.message,
						details: {
							description: failure.description ?? null,
							httpCode: failure instanceof NodeApiError ? (failure.httpCode ?? null) : null,
						},
					},
					pairedItem: { item: itemIndex },
				});
			}
		}
		return [out];
	}
}

/**
 * Parameters of the `pipeline` resource (spec "Pipelines": read-only): Get Many, Get Stages, Get Statuses.
 */
import type { INodeProperties } from 'n8n-workflow';
import { dropdown, operationsOf, showFor } from './common';

const show = (operations: string[]) => showFor('pipeline', operations);

export const pipelineOperations: INodeProperties[] = operationsOf(
	'pipeline',
	[
		{
			name: 'Get Many',
			value: 'getMany',
			description: "List the company's pipelines",
			action: 'Get many pipelines',
		},
		{
			name: 'Get Stages',
			value: 'getStages',
			description: 'List the stages of a pipeline, in order',
			action: 'Get the stages of a pipeline',
		},
		{
			name: 'Get Statuses',
			value: 'getStatuses',
			description: 'List the statuses a stage offers',
			action: 'Get the statuses of a stage',
		},
	],
	'getMany',
);

export const pipelineFields: INodeProperties[] = [
	dropdown('Pipeline Name or ID', 'pipelineId', 'getPipelines', [], {
		required: true,
		displayOptions: show(['getStages', 'getStatuses']),
	}),
	dropdown('Stage Name or ID', 'stageId', 'getStages', ['pipelineId'], {
		required: true,
		displayOptions: show(['getStatuses']),
	}),
];

/**
 * Parameters of the `pipeline` resource (spec "Pipelines": read-only): Get Many, Get Stages, Get Statuses.
 */
import type { INodeProperties } from 'n8n-workflow';

const showFor = (operations: string[]) => ({ show: { resource: ['pipeline'], operation: operations } });

export const pipelineOperations: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['pipeline'] } },
		options: [
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
		default: 'getMany',
	},
];

export const pipelineFields: INodeProperties[] = [
	{
		displayName: 'Pipeline Name or ID',
		name: 'pipelineId',
		type: 'options',
		typeOptions: { loadOptionsMethod: 'getPipelines' },
		required: true,
		default: '',
		description:
			'Choose from the list, or specify an ID using an <a href="https://docs.n8n.io/code/expressions/">expression</a>',
		displayOptions: showFor(['getStages', 'getStatuses']),
	},
	{
		displayName: 'Stage Name or ID',
		name: 'stageId',
		type: 'options',
		typeOptions: { loadOptionsMethod: 'getStages', loadOptionsDependsOn: ['pipelineId'] },
		required: true,
		default: '',
		description:
			'Choose from the list, or specify an ID using an <a href="https://docs.n8n.io/code/expressions/">expression</a>',
		displayOptions: showFor(['getStatuses']),
	},
];

/**
 * The `pipeline` operations (spec "Pipelines"): GET /v1/ext/pipelines, .../{pipeline_id}/stages and
 * .../stages/{stage_id}/statuses, every page (Link rel="next").
 */
import type { IExecuteFunctions } from 'n8n-workflow';
import type { Pipeline, Stage, Status } from '@stageline/shared';
import { apiPath } from '../../shared/server-url';
import { listAll } from '../../shared/transport';
import type { OperationHandlers } from './types';

export const pipelineHandlers: OperationHandlers = {
	async getMany(this: IExecuteFunctions, itemIndex: number): Promise<object[]> {
		return (await listAll<Pipeline>(this, { url: apiPath('pipelines'), itemIndex }));
	},
	async getStages(this: IExecuteFunctions, itemIndex: number): Promise<object[]> {
		const pipelineId = this.getNodeParameter('pipelineId', itemIndex) as string;
		return (await listAll<Stage>(this, { url: apiPath('pipelines', pipelineId, 'stages'), itemIndex }));
	},
	async getStatuses(this: IExecuteFunctions, itemIndex: number): Promise<object[]> {
		const pipelineId = this.getNodeParameter('pipelineId', itemIndex) as string;
		const stageId = this.getNodeParameter('stageId', itemIndex) as string;
		const url = apiPath('pipelines', pipelineId, 'stages', stageId, 'statuses');
		return (await listAll<Status>(this, { url, itemIndex }));
	},
};

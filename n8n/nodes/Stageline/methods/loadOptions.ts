/**
 * Dropdowns (`loadOptions`): pipelines, the chosen pipeline's stages, the chosen stage's statuses (spec "Pipelines").
 * Stage and status depend on the pipeline and stage parameters (`loadOptionsDependsOn`), which sit at the top level
 * or in the "Filters" collection; on Item → Update the pipeline is the chosen item's.
 */
import type { ILoadOptionsFunctions, INodePropertyOptions } from 'n8n-workflow';
import type { Item, Pipeline, Stage, Status } from '@stageline/shared';
import { apiPath } from '../../shared/server-url';
import { apiJson, listAll } from '../../shared/transport';

/** The first non-empty string among the current values of the given parameter paths, or ''. */
export function currentValue(context: ILoadOptionsFunctions, ...paths: string[]): string {
	for (const path of paths) {
		let value: unknown;
		try {
			value = context.getCurrentNodeParameter(path, { extractValue: true });
		} catch {
			continue; // a parameter this operation does not show
		}
		if (typeof value === 'string' && value.trim() !== '') return value.trim();
	}
	return '';
}

/**
 * The pipeline the dropdowns and custom fields are for: the `pipelineId` parameter (or the Filters one), else the
 * pipeline of the chosen item (GET /v1/ext/items/{item_id}); '' when neither is chosen yet.
 */
export async function currentPipeline(context: ILoadOptionsFunctions): Promise<string> {
	const pipelineId = currentValue(context, 'pipelineId', 'filters.pipelineId');
	if (pipelineId !== '') return pipelineId;
	const itemId = currentValue(context, 'itemId');
	if (itemId === '') return '';
	return (await apiJson<Item>(context, { url: apiPath('items', itemId) })).pipeline_id;
}

/** Entries as dropdown options, in the server's order. */
function asOptions(entries: Array<{ id: string; name: string }>): INodePropertyOptions[] {
	return entries.map((e) => ({ name: e.name, value: e.id }));
}

/** GET /v1/ext/pipelines, every page (archived pipelines are not listed by the server). */
export async function getPipelines(this: ILoadOptionsFunctions): Promise<INodePropertyOptions[]> {
	return asOptions(await listAll<Pipeline>(this, { url: apiPath('pipelines') }));
}

/** The stages of the current pipeline, in order; none until a pipeline (or item) is chosen. */
export async function getStages(this: ILoadOptionsFunctions): Promise<INodePropertyOptions[]> {
	const pipelineId = await currentPipeline(this);
	if (pipelineId === '') return [];
	return asOptions(await listAll<Stage>(this, { url: apiPath('pipelines', pipelineId, 'stages') }));
}

/** The statuses of the current stage; none until a pipeline (or item) and a stage are chosen. */
export async function getStatuses(this: ILoadOptionsFunctions): Promise<INodePropertyOptions[]> {
	const stageId = currentValue(this, 'stageId', 'updateFields.stageId', 'filters.stageId');
	if (stageId === '') return [];
	const pipelineId = await currentPipeline(this);
	if (pipelineId === '') return [];
	return asOptions(await listAll<Status>(this, { url: apiPath('pipelines', pipelineId, 'stages', stageId, 'statuses') }));
}

/**
 * The trigger's Pipeline dropdown (`loadOptions`): "All Pipelines" (value '', no filter) first, then every pipeline
 * the key can see (GET /v1/ext/pipelines through the action node's loader). An empty value that is one of the options
 * keeps the editor from marking the optional filter as an issue.
 */
import type { ILoadOptionsFunctions, INodePropertyOptions } from 'n8n-workflow';
import { getPipelines } from '../Stageline/methods/loadOptions';

/** The option meaning "no pipeline filter". */
export const ALL_PIPELINES: INodePropertyOptions = { name: 'All Pipelines', value: '' };

/** [All Pipelines, ...pipelines]. @throws NodeApiError as the transport does. */
export async function getPipelineFilter(this: ILoadOptionsFunctions): Promise<INodePropertyOptions[]> {
	return [ALL_PIPELINES, ...(await getPipelines.call(this))];
}

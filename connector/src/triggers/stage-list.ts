/**
 * Hidden trigger `stage_list`: the stages of the pipeline chosen in `pipeline_id`, in pipeline order, for the Stage
 * dropdowns (`dynamic: 'stage_list.id.name'`). Spec "Pipelines": GET /v1/ext/pipelines/{pipeline_id}/stages.
 */
import { defineTrigger, type Bundle, type ZObject } from 'zapier-platform-core';
import type { Stage } from '@stageline/shared';
import { apiPath, getAllPages } from '../client';
import { requireId } from '../fields/coerce';

/** The stages of `inputData.pipeline_id` (the step's Pipeline field), in order. */
export async function listStages(z: ZObject, bundle: Bundle): Promise<Stage[]> {
  const pipelineId = requireId(bundle.inputData.pipeline_id, 'Pipeline (choose one above first)');
  return getAllPages<Stage>(z, apiPath('pipelines', pipelineId, 'stages'));
}

export default defineTrigger({
  key: 'stage_list',
  noun: 'Stage',
  display: {
    label: 'List Stages',
    description: 'Lists the stages of a pipeline, for dropdowns.',
    hidden: true,
  },
  operation: {
    type: 'polling',
    perform: listStages,
    sample: { id: '3c9e1a7b-5f2d-4b8e-a6c4-1d0f9e8b7a62', name: 'Qualified' },
    outputFields: [
      { key: 'id', label: 'Stage ID', type: 'string' },
      { key: 'name', label: 'Name', type: 'string' },
    ],
  },
});

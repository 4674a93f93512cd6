/**
 * Hidden trigger `status_list`: the statuses the chosen stage offers, for the Status dropdowns
 * (`dynamic: 'status_list.id.name'`). Spec "Pipelines": GET /v1/ext/pipelines/{pipeline_id}/stages/{stage_id}/statuses.
 */
import { defineTrigger, type Bundle, type ZObject } from 'zapier-platform-core';
import type { Status } from '@stageline/shared';
import { apiPath, getAllPages } from '../client';
import { requireId } from '../fields/coerce';

/** The statuses of `inputData.stage_id` in `inputData.pipeline_id` (the step's Stage and Pipeline fields). */
export async function listStatuses(z: ZObject, bundle: Bundle): Promise<Status[]> {
  const pipelineId = requireId(bundle.inputData.pipeline_id, 'Pipeline (choose one above first)');
  const stageId = requireId(bundle.inputData.stage_id, 'Stage (choose one above first)');
  return getAllPages<Status>(z, apiPath('pipelines', pipelineId, 'stages', stageId, 'statuses'));
}

export default defineTrigger({
  key: 'status_list',
  noun: 'Status',
  display: {
    label: 'List Statuses',
    description: 'Lists the statuses a stage offers, for dropdowns.',
    hidden: true,
  },
  operation: {
    type: 'polling',
    perform: listStatuses,
    sample: { id: '9a4b2c6d-8e1f-4a3b-b5c7-d9e0f1a2b3c4', name: 'Open' },
    outputFields: [
      { key: 'id', label: 'Status ID', type: 'string' },
      { key: 'name', label: 'Name', type: 'string' },
    ],
  },
});

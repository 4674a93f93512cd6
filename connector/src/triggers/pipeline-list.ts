/**
 * Hidden trigger `pipeline_list`: the company's pipelines for the Pipeline dropdowns (`dynamic: 'pipeline_list.id.name'`).
 * Spec "Pipelines": GET /v1/ext/pipelines (any valid key, CONTRACT "Scopes and limits").
 */
import { defineTrigger, type ZObject } from 'zapier-platform-core';
import type { Pipeline } from '@stageline/shared';
import { apiPath, getAllPages } from '../client';

/** Every pipeline of the company (all pages). */
export function listPipelines(z: ZObject): Promise<Pipeline[]> {
  return getAllPages<Pipeline>(z, apiPath('pipelines'));
}

export default defineTrigger({
  key: 'pipeline_list',
  noun: 'Pipeline',
  display: {
    label: 'List Pipelines',
    description: 'Lists the pipelines of your company, for dropdowns.',
    hidden: true,
  },
  operation: {
    type: 'polling',
    perform: listPipelines,
    sample: { id: '0b7f3c1e-2d4a-4e8f-9c6b-7a5d3e1f2a90', name: 'Sales', created_at: '2026-01-15T08:00:00.000Z' },
    outputFields: [
      { key: 'id', label: 'Pipeline ID', type: 'string' },
      { key: 'name', label: 'Name', type: 'string' },
      { key: 'created_at', label: 'Created At', type: 'datetime' },
    ],
  },
});

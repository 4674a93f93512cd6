import { z } from "zod";
import { CustomFieldTypeSchema } from "./blueprint";

/** Spec "Pipeline, stage, status": a pipeline of the company (GET /v1/ext/pipelines). */
export const PipelineSchema = z.object({
  id: z.string(),
  name: z.string(),
  created_at: z.iso.datetime({ offset: true }),
});
/** A pipeline. */
export type Pipeline = z.infer<typeof PipelineSchema>;

/** Spec "Pipeline, stage, status": a stage of a pipeline, listed in order (GET /v1/ext/pipelines/{pipeline_id}/stages). */
export const StageSchema = z.object({
  id: z.string(),
  name: z.string(),
});
/** A stage. */
export type Stage = z.infer<typeof StageSchema>;

/** Spec "Pipeline, stage, status": a status offered by a stage (GET .../stages/{stage_id}/statuses). */
export const StatusSchema = z.object({
  id: z.string(),
  name: z.string(),
});
/** A status. */
export type Status = z.infer<typeof StatusSchema>;

/**
 * ADDITIVE endpoint GET /v1/ext/pipelines/{pipeline_id}/fields (CONTRACT: additions are additive): one custom field of
 * the pipeline blueprint, `{ key, label, type, required, options? }` with `required` always a boolean, in blueprint order.
 */
export const PipelineFieldSchema = z.object({
  key: z.string(),
  label: z.string(),
  type: CustomFieldTypeSchema,
  required: z.boolean(),
  options: z.array(z.string()).optional(),
});
/** A custom field as listed by GET /pipelines/{pipeline_id}/fields. */
export type PipelineField = z.infer<typeof PipelineFieldSchema>;

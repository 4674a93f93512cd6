/**
 * Read-only pipeline lookups (spec "Pipelines"; CONTRACT "Scopes and limits": any valid key): pipelines newest
 * first, a pipeline's stages in order, a stage's statuses in order, and the additive custom-field list of a pipeline.
 * An unknown id, or one of another company, is `404 not_found` (CONTRACT "Errors").
 */
import type { CustomField, Pipeline, Stage, Status } from "@stageline/shared";
import type { PrismaClient } from "../generated/prisma/client";
import * as pipelines from "../db/pipelines";
import type { PipelineRow } from "../db/pipelines";
import { notFound } from "./errors";
import { readBlueprint } from "./item-format";

/** A custom field as GET /pipelines/{pipeline_id}/fields returns it: `required` always present. */
export type PipelineField = CustomField & { required: boolean };

/**
 * The company's pipeline `pipelineId`.
 * @throws DomainError 404 `not_found` when unknown or another company's.
 */
export async function requirePipeline(prisma: PrismaClient, companyId: string, pipelineId: string): Promise<PipelineRow> {
  const pipeline = await pipelines.findPipeline(prisma, companyId, pipelineId);
  if (!pipeline) throw notFound("Pipeline", pipelineId);
  return pipeline;
}

/** Spec "Pipelines": every pipeline of the company as `{ id, name, created_at }`, newest first. */
export async function listPipelines(prisma: PrismaClient, companyId: string): Promise<Pipeline[]> {
  const rows = await pipelines.listPipelines(prisma, companyId);
  return rows.map((p) => ({ id: p.id, name: p.name, created_at: p.createdAt.toISOString() }));
}

/**
 * Spec "Pipelines": the stages of the company's pipeline as `{ id, name }`, in order.
 * @throws DomainError 404 `not_found` for an unknown or another company's pipeline.
 */
export async function listStages(prisma: PrismaClient, companyId: string, pipelineId: string): Promise<Stage[]> {
  const pipeline = await requirePipeline(prisma, companyId, pipelineId);
  const rows = await pipelines.listStages(prisma, pipeline.id);
  return rows.map((s) => ({ id: s.id, name: s.name }));
}

/**
 * Spec "Pipelines": the statuses stage `stageId` of the company's pipeline offers, as `{ id, name }`, in order
 * (the first is the default status of items entering the stage).
 * @throws DomainError 404 `not_found` for an unknown or another company's pipeline, or a stage not in that pipeline.
 */
export async function listStatuses(prisma: PrismaClient, companyId: string, pipelineId: string, stageId: string): Promise<Status[]> {
  const pipeline = await requirePipeline(prisma, companyId, pipelineId);
  const stage = await pipelines.findStage(prisma, pipeline.id, stageId);
  if (!stage) throw notFound("Stage", stageId);
  const rows = await pipelines.listStatuses(prisma, stage.id);
  return rows.map((s) => ({ id: s.id, name: s.name }));
}

/**
 * Additive endpoint (for the Zapier connector's dynamic input fields): the pipeline blueprint's custom fields as
 * `{ key, label, type, required, options? }` in blueprint order; `required` is always a boolean, `options` only
 * for select fields.
 * @throws DomainError 404 `not_found` for an unknown or another company's pipeline.
 */
export async function listCustomFields(prisma: PrismaClient, companyId: string, pipelineId: string): Promise<PipelineField[]> {
  const pipeline = await requirePipeline(prisma, companyId, pipelineId);
  return customFieldsOf(pipeline.blueprint);
}

/** The custom fields of a stored blueprint as {@link listCustomFields} returns them. */
export function customFieldsOf(blueprint: unknown): PipelineField[] {
  return readBlueprint(blueprint).custom_fields.map((f) => ({
    key: f.key,
    label: f.label,
    type: f.type,
    required: f.required ?? false,
    ...(f.options !== undefined ? { options: [...f.options] } : {}),
  }));
}

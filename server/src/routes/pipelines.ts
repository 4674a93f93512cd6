/**
 * Pipeline lookups under /v1/ext (spec "Pipelines", read-only; CONTRACT "Scopes and limits": any valid key):
 * - GET /pipelines: the company's pipelines, newest first, as `Pipeline[]`.
 * - GET /pipelines/:pipeline_id/stages: the pipeline's stages in order, as `Stage[]`.
 * - GET /pipelines/:pipeline_id/stages/:stage_id/statuses: the statuses the stage offers, in order, as `Status[]`.
 * - GET /pipelines/:pipeline_id/fields: ADDITIVE endpoint, not in the spec (CONTRACT: additions are additive).
 *   The pipeline blueprint's custom fields as `{ key, label, type, required, options? }[]` (shared CustomFieldSchema,
 *   `required` always a boolean) in blueprint order, so an integration (the Zapier connector) can build inputs
 *   for a pipeline's custom fields.
 * Unknown ids, or ids of another company, are `404 not_found`.
 */
import { Router } from "express";
import type { Pipeline, Stage, Status } from "@stageline/shared";
import type { AppContext } from "../context";
import { authOf } from "../http/auth";
import * as service from "../services/pipelines";

type PipelinePath = { pipeline_id: string };
type StagePath = PipelinePath & { stage_id: string };

/** Routes under /v1/ext for pipelines, stages, statuses and custom fields. */
export function pipelinesRouter(ctx: AppContext): Router {
  const router = Router();

  router.get("/pipelines", async (req, res) => {
    const body: Pipeline[] = await service.listPipelines(ctx.prisma, authOf(req).company.id);
    res.json(body);
  });

  router.get<PipelinePath>("/pipelines/:pipeline_id/stages", async (req, res) => {
    const body: Stage[] = await service.listStages(ctx.prisma, authOf(req).company.id, req.params.pipeline_id);
    res.json(body);
  });

  router.get<StagePath>("/pipelines/:pipeline_id/stages/:stage_id/statuses", async (req, res) => {
    const { pipeline_id, stage_id } = req.params;
    const body: Status[] = await service.listStatuses(ctx.prisma, authOf(req).company.id, pipeline_id, stage_id);
    res.json(body);
  });

  router.get<PipelinePath>("/pipelines/:pipeline_id/fields", async (req, res) => {
    const body: service.PipelineField[] = await service.listCustomFields(ctx.prisma, authOf(req).company.id, req.params.pipeline_id);
    res.json(body);
  });

  return router;
}

/**
 * `client.pipelines` (CONTRACT "Client library"; spec "Pipelines"): the ids a script needs to create items.
 * These lists are short and unpaged: each returns the whole array.
 */
import { requireId, unwrap, type ApiContext } from "../api";
import type { Pipeline, PipelineField, Stage, Status } from "../types";

/** Pipelines, their stages, the statuses each stage offers and their custom fields. */
export class Pipelines {
  constructor(private readonly ctx: ApiContext) {}

  /**
   * The company's pipelines that are not archived (GET /v1/ext/pipelines; any valid key).
   * @throws StagelineError subclasses, ConnectionError.
   */
  list(): Promise<Pipeline[]> {
    return unwrap(this.ctx.read((fetch) => this.ctx.api.GET("/v1/ext/pipelines", { fetch })));
  }

  /**
   * A pipeline's stages in order (GET /v1/ext/pipelines/{pipeline_id}/stages).
   * @throws NotFoundError for an unknown pipeline.
   * @throws TypeError (the promise rejects, nothing is sent) when an id is empty or blank.
   */
  async stages(pipelineId: string): Promise<Stage[]> {
    const path = { pipeline_id: requireId("pipelineId", pipelineId) };
    return unwrap(this.ctx.read((fetch) => this.ctx.api.GET("/v1/ext/pipelines/{pipeline_id}/stages", { params: { path }, fetch })));
  }

  /**
   * The statuses a stage offers, the default (first) one first (GET /v1/ext/pipelines/{pipeline_id}/stages/{stage_id}/statuses).
   * @throws NotFoundError for an unknown pipeline or stage.
   * @throws TypeError (the promise rejects, nothing is sent) when an id is empty or blank.
   */
  async statuses(pipelineId: string, stageId: string): Promise<Status[]> {
    const path = { pipeline_id: requireId("pipelineId", pipelineId), stage_id: requireId("stageId", stageId) };
    return unwrap(this.ctx.read((fetch) => this.ctx.api.GET("/v1/ext/pipelines/{pipeline_id}/stages/{stage_id}/statuses", { params: { path }, fetch })));
  }

  /**
   * A pipeline's custom fields in blueprint order, `{ key, label, type, required, options? }` (GET
   * /v1/ext/pipelines/{pipeline_id}/fields): the keys of an item's `metadata`.
   * @throws NotFoundError for an unknown pipeline.
   * @throws TypeError (the promise rejects, nothing is sent) when the id is empty or blank.
   */
  async fields(pipelineId: string): Promise<PipelineField[]> {
    const path = { pipeline_id: requireId("pipelineId", pipelineId) };
    return unwrap(this.ctx.read((fetch) => this.ctx.api.GET("/v1/ext/pipelines/{pipeline_id}/fields", { params: { path }, fetch })));
  }
}

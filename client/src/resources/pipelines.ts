/**
 * `client.pipelines` (CONTRACT "Client library"; spec "Pipelines"): the ids a script needs to create items.
 * These lists are short and unpaged: each returns the whole array.
 */
import { requireId, unwrap, type ApiContext } from "../api";
import type { Pipeline, Stage, Status } from "../types";

/** Pipelines, their stages and the statuses each stage offers. */
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
}

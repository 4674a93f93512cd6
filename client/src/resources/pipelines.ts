/**
 * `client.pipelines` (CONTRACT "Client library"; spec "Pipelines"): the ids a script needs to create items.
 * These lists are short and unpaged: each returns the whole array.
 */
import { unwrap, type ApiContext } from "../api";
import type { Pipeline, Stage, Status } from "../types";

/** Pipelines, their stages and the statuses each stage offers. */
export class Pipelines {
  constructor(private readonly ctx: ApiContext) {}

  /**
   * The company's pipelines that are not archived (GET /v1/ext/pipelines; any valid key).
   * @throws StagelineError subclasses, ConnectionError.
   */
  list(): Promise<Pipeline[]> {
    return unwrap(this.ctx.api.GET("/v1/ext/pipelines", { fetch: this.ctx.read }));
  }

  /**
   * A pipeline's stages in order (GET /v1/ext/pipelines/{pipeline_id}/stages).
   * @throws NotFoundError for an unknown pipeline.
   */
  stages(pipelineId: string): Promise<Stage[]> {
    return unwrap(this.ctx.api.GET("/v1/ext/pipelines/{pipeline_id}/stages", { params: { path: { pipeline_id: pipelineId } }, fetch: this.ctx.read }));
  }

  /**
   * The statuses a stage offers, the default (first) one first (GET /v1/ext/pipelines/{pipeline_id}/stages/{stage_id}/statuses).
   * @throws NotFoundError for an unknown pipeline or stage.
   */
  statuses(pipelineId: string, stageId: string): Promise<Status[]> {
    return unwrap(
      this.ctx.api.GET("/v1/ext/pipelines/{pipeline_id}/stages/{stage_id}/statuses", {
        params: { path: { pipeline_id: pipelineId, stage_id: stageId } },
        fetch: this.ctx.read,
      }),
    );
  }
}

/**
 * Where an item sits: its stage and status (CONTRACT "Pipelines, blueprints, transitions"). An item may move to any
 * stage of its own pipeline; its status must be one the (new) stage offers; creating an item or moving its stage
 * without `status_id` puts it in that stage's first status. Resolved against the pipeline's structure (stages and
 * statuses in order, db/pipelines.ts `findPipelineStructure`), so no query runs here.
 */
import type { NamedRow, PipelineStructure } from "../db/pipelines";
import { failed, passed, type Checked } from "./references";

/** A resolved stage and status. */
export interface Placement {
  stage: NamedRow;
  status: NamedRow;
}

/** What the request asks for: ids from the create or update body (absent = not given). */
export interface PlacementRequest {
  stageId?: string | undefined;
  statusId?: string | undefined;
}

/**
 * Resolves the stage and status of an item of pipeline `pipeline`.
 * - On create (`current` absent) `stageId` is required; on update an absent `stageId` keeps the current stage.
 * - An absent `statusId` keeps the current status when the stage stays, else takes the stage's first status.
 * Failures (all `422 invalid_reference` material): `stage_id` not a stage of this pipeline; `status_id` not offered
 * by the stage; a stage offering no status at all.
 * @throws Error when neither `request.stageId` nor `current` is given (a programming error).
 */
export function resolvePlacement(pipeline: PipelineStructure, request: PlacementRequest, current?: Placement): Checked<Placement> {
  let stage: NamedRow | null = current?.stage ?? null;
  let offered: NamedRow[] | null = null;
  if (request.stageId !== undefined && request.stageId !== current?.stage.id) {
    const found = pipeline.stages.find((s) => s.id === request.stageId);
    if (!found) {
      return failed([
        {
          path: "stage_id",
          message: `stage_id "${request.stageId}" is not a stage of pipeline "${pipeline.name}". List its stages with GET /v1/ext/pipelines/${pipeline.id}/stages.`,
        },
      ]);
    }
    stage = { id: found.id, name: found.name };
    offered = found.statuses;
  }
  if (!stage) throw new Error("resolvePlacement: stageId is required when there is no current stage");
  const stageId = stage.id;
  offered ??= pipeline.stages.find((s) => s.id === stageId)?.statuses ?? [];

  const stageStays = current !== undefined && stage.id === current.stage.id;
  if (request.statusId !== undefined) {
    const status =
      stageStays && request.statusId === current.status.id ? current.status : offered.find((s) => s.id === request.statusId);
    if (status) return passed({ stage, status: { id: status.id, name: status.name } });
    return failed([
      {
        path: "status_id",
        message: `status_id "${request.statusId}" is not offered by stage "${stage.name}". List its statuses with GET /v1/ext/pipelines/${pipeline.id}/stages/${stage.id}/statuses.`,
      },
    ]);
  }
  if (stageStays) return passed({ stage, status: current.status });
  const first = offered[0];
  if (first) return passed({ stage, status: { id: first.id, name: first.name } });
  return failed([{ path: "stage_id", message: `Stage "${stage.name}" offers no statuses, so no item can be placed in it.` }]);
}

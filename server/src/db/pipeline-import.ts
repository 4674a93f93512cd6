/**
 * Data access for importing a pipeline (tables `pipelines`, `stages`, `statuses`): one pipeline with its ordered
 * stages and each stage's ordered statuses. Call it inside a transaction so a failure leaves nothing behind.
 */
import type { Prisma } from "../generated/prisma/client";
import type { Queryable } from "./companies";

/** What to store: stages and statuses in order (their index becomes `position`). */
export interface PipelineTree {
  companyId: string;
  name: string;
  shortIdPrefix: string;
  /** `{ custom_fields, duplicate_detection? }` as stored in the `blueprint` JSON column. */
  blueprint: Prisma.InputJsonValue;
  stages: { name: string; statuses: string[] }[];
}

/**
 * Inserts the pipeline, its stages (position 0..n-1) and their statuses (position 0..m-1).
 * @returns the stored pipeline with stages and statuses, each ordered by position.
 */
export function insertPipelineTree(db: Queryable, tree: PipelineTree) {
  return db.pipeline.create({
    data: {
      companyId: tree.companyId,
      name: tree.name,
      shortIdPrefix: tree.shortIdPrefix,
      blueprint: tree.blueprint,
      stages: {
        create: tree.stages.map((stage, position) => ({
          name: stage.name,
          position,
          statuses: { create: stage.statuses.map((name, statusPosition) => ({ name, position: statusPosition })) },
        })),
      },
    },
    include: {
      stages: {
        orderBy: { position: "asc" },
        include: { statuses: { orderBy: { position: "asc" } } },
      },
    },
  });
}

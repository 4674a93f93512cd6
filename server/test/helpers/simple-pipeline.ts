/**
 * A one-stage pipeline ("New", with the one status "Open") of the test company with the given blueprint, written
 * straight into the database: for tests of duplicate detection and upsert on blueprints the Sales pipeline lacks.
 */
import type { TestServer } from "./test-server";

/** The pipeline's id and its one stage's id. */
export interface SimplePipeline {
  id: string;
  stageId: string;
}

/** Creates the pipeline `name` (short-id prefix `prefix`) with `blueprint` for `t`'s company. */
export async function createSimplePipeline(t: TestServer, name: string, prefix: string, blueprint: object): Promise<SimplePipeline> {
  const pipeline = await t.server.ctx.prisma.pipeline.create({
    data: {
      companyId: t.companyId,
      name,
      shortIdPrefix: prefix,
      blueprint,
      stages: { create: [{ name: "New", position: 0, statuses: { create: [{ name: "Open", position: 0 }] } }] },
    },
    include: { stages: true },
  });
  return { id: pipeline.id, stageId: pipeline.stages[0]!.id };
}

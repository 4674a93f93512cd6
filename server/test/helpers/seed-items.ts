/** Inserts items straight into a test server's database with chosen creation times (the list endpoints only read them). */
import type { TestPipeline, TestServer } from "./test-server";

/** One item to insert: name, creation time, optional update time, stage index and status index (default 0). */
export interface SeedItemSpec {
  name: string;
  createdAt: Date;
  updatedAt?: Date;
  stage?: number;
  status?: number;
}

/**
 * Inserts `specs` as items of `companyId` in `pipeline` (one createMany), with short ids `SEED-<n>` continuing the
 * pipeline's item count.
 * @throws the database error when an insert fails (e.g. a stage index the pipeline lacks).
 */
export async function seedItems(t: TestServer, companyId: string, pipeline: TestPipeline, specs: SeedItemSpec[]): Promise<void> {
  const prisma = t.server.ctx.prisma;
  const base = await prisma.item.count({ where: { pipelineId: pipeline.id } });
  await prisma.item.createMany({
    data: specs.map((s, i) => {
      const stage = pipeline.stages[s.stage ?? 0]!;
      return {
        companyId,
        pipelineId: pipeline.id,
        stageId: stage.id,
        statusId: stage.statuses[s.status ?? 0]!.id,
        shortId: `SEED-${base + i + 1}`,
        name: s.name,
        createdAt: s.createdAt,
        updatedAt: s.updatedAt ?? s.createdAt,
      };
    }),
  });
}

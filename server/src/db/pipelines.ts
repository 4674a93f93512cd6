/**
 * Data access for pipelines, stages and statuses (tables `pipelines`, `stages`, `statuses`).
 * Every pipeline lookup is scoped to a company, so another tenant's ids read as unknown (CONTRACT "Errors", 404).
 * Functions take either the client or a transaction client, so services can call them inside `$transaction`.
 */
import type { Prisma, PrismaClient } from "../generated/prisma/client";

/** The Prisma client or an interactive-transaction client. */
export type Db = PrismaClient | Prisma.TransactionClient;

/** A pipeline row as the services need it. */
export interface PipelineRow {
  id: string;
  name: string;
  shortIdPrefix: string;
  /** The stored blueprint JSON (read it with `readBlueprint`). */
  blueprint: unknown;
  createdAt: Date;
}

/** A stage or a status: id and name. */
export interface NamedRow {
  id: string;
  name: string;
}

const PIPELINE_SELECT = { id: true, name: true, shortIdPrefix: true, blueprint: true, createdAt: true } as const;
const NAMED_SELECT = { id: true, name: true } as const;

/** The company's pipeline `pipelineId`, or null when unknown or another company's. */
export function findPipeline(db: Db, companyId: string, pipelineId: string): Promise<PipelineRow | null> {
  return db.pipeline.findFirst({ where: { id: pipelineId, companyId }, select: PIPELINE_SELECT });
}

/** Every pipeline of the company, newest first (`created_at` desc, then id desc). */
export function listPipelines(db: Db, companyId: string): Promise<PipelineRow[]> {
  return db.pipeline.findMany({
    where: { companyId },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    select: PIPELINE_SELECT,
  });
}

/** The stages of a pipeline in order (`position`, then id). */
export function listStages(db: Db, pipelineId: string): Promise<NamedRow[]> {
  return db.stage.findMany({
    where: { pipelineId },
    orderBy: [{ position: "asc" }, { id: "asc" }],
    select: NAMED_SELECT,
  });
}

/** Stage `stageId` when it belongs to pipeline `pipelineId`, else null. */
export function findStage(db: Db, pipelineId: string, stageId: string): Promise<NamedRow | null> {
  return db.stage.findFirst({ where: { id: stageId, pipelineId }, select: NAMED_SELECT });
}

/** The statuses a stage offers, in order (`position`, then id). */
export function listStatuses(db: Db, stageId: string): Promise<NamedRow[]> {
  return db.status.findMany({
    where: { stageId },
    orderBy: [{ position: "asc" }, { id: "asc" }],
    select: NAMED_SELECT,
  });
}

/** Status `statusId` when stage `stageId` offers it, else null. */
export function findStatus(db: Db, stageId: string, statusId: string): Promise<NamedRow | null> {
  return db.status.findFirst({ where: { id: statusId, stageId }, select: NAMED_SELECT });
}

/** The first status of a stage (lowest `position`), or null when the stage offers none. */
export function findFirstStatus(db: Db, stageId: string): Promise<NamedRow | null> {
  return db.status.findFirst({
    where: { stageId },
    orderBy: [{ position: "asc" }, { id: "asc" }],
    select: NAMED_SELECT,
  });
}

/**
 * Takes the next number of the pipeline's `short_id` counter (CONTRACT: per-pipeline counter, never reused) with
 * one autocommitted `UPDATE ... RETURNING`, outside the item's transaction: the row lock lasts one statement, so
 * concurrent creates in one pipeline do not queue behind each other's transactions. A create that fails after this
 * leaves a gap; a number is never handed out twice.
 * @returns the pipeline's prefix and the number taken.
 */
export async function takeShortIdNumber(db: Db, pipelineId: string): Promise<{ prefix: string; number: number }> {
  const rows = await db.$queryRaw<{ prefix: string; number: number }[]>`
    UPDATE pipelines SET next_short_id = next_short_id + 1 WHERE id = ${pipelineId}
    RETURNING short_id_prefix AS prefix, next_short_id - 1 AS number`;
  const row = rows[0];
  if (!row) throw new Error(`pipeline ${pipelineId} vanished while taking a short id`);
  return { prefix: row.prefix, number: Number(row.number) };
}

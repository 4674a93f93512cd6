/**
 * Pipeline import (CONTRACT "Pipelines, blueprints, transitions"): turns a pipeline file (`PipelineImportSchema`)
 * into a pipeline with ordered stages, each stage's statuses and the blueprint (custom fields, duplicate detection).
 * Used by the admin `pipelines import` command and by the demo seed.
 */
import { PipelineImportSchema, enforceBlueprintLimits, parseInput, type Blueprint, type Pipeline, type PipelineImport, type Stage, type Status } from "@stageline/shared";
import { inTransaction, type Queryable } from "../db/companies";
import { insertPipelineTree } from "../db/pipeline-import";
import { requireCompany } from "./companies";

/** An imported pipeline: the Pipeline fields, its short-id prefix and its stages in order with their statuses. */
export interface ImportedPipeline extends Pipeline {
  short_id_prefix: string;
  stages: (Stage & { statuses: Status[] })[];
}

/** Prefix used when a pipeline name has no letters A-Z at all (e.g. "2026"). */
export const FALLBACK_SHORT_ID_PREFIX = "ITEM";

/**
 * The default `short_id` prefix of a pipeline: the letters of its name, upper-cased, accents dropped, at most 10
 * ("Sales" -> `SALES`, "Key accounts 2026" -> `KEYACCOUNT`); `ITEM` when the name has no letters.
 */
export function defaultShortIdPrefix(name: string): string {
  const letters = name
    .normalize("NFKD")
    .toUpperCase()
    .replace(/[^A-Z]/g, "")
    .slice(0, 10);
  return letters || FALLBACK_SHORT_ID_PREFIX;
}

/**
 * Imports a pipeline for a company. `input` is first held to the blueprint limits (shared blueprint-limits.ts
 * `enforceBlueprintLimits`: 50 stages, 20 statuses per stage, 100 custom fields, 100 options per select field,
 * 64 KB of JSON), then parsed with `PipelineImportSchema` (stages in order, statuses
 * defaulting to Open, Won, Lost, custom fields and duplicate detection checked against each other). Everything is
 * written in one transaction: the pipeline, its stages and statuses exist completely or not at all. When `db` is a
 * transaction client the import joins that transaction.
 * @returns the pipeline with its stages and statuses in order.
 * @throws DomainError 422 `validation_failed` naming each blueprint limit exceeded (nothing else is checked then);
 *   400 `validation_failed` listing every failing field of the file; 404 `not_found` when the company does not exist.
 */
export async function importPipeline(db: Queryable, companyId: string, input: unknown): Promise<ImportedPipeline> {
  enforceBlueprintLimits(input, "pipeline file");
  const file: PipelineImport = parseInput(PipelineImportSchema, input, "pipeline file");
  const blueprint: Blueprint = { custom_fields: file.custom_fields ?? [] };
  if (file.duplicate_detection) blueprint.duplicate_detection = file.duplicate_detection;
  const stored = await inTransaction(db, async (tx) => {
    await requireCompany(tx, companyId);
    return insertPipelineTree(tx, {
      companyId,
      name: file.name,
      shortIdPrefix: file.short_id_prefix ?? defaultShortIdPrefix(file.name),
      blueprint,
      stages: file.stages.map((stage) => ({ name: stage.name, statuses: stage.statuses })),
    });
  });
  return {
    id: stored.id,
    name: stored.name,
    created_at: stored.createdAt.toISOString(),
    short_id_prefix: stored.shortIdPrefix,
    stages: stored.stages.map((stage) => ({
      id: stage.id,
      name: stage.name,
      statuses: stage.statuses.map((status) => ({ id: status.id, name: status.name })),
    })),
  };
}

/**
 * Duplicate check (CONTRACT "Duplicate check"; "Pipelines, blueprints, transitions"): finds items of a pipeline
 * that match a would-be item under the pipeline blueprint's `duplicate_detection` `{ fields, match }`, without
 * creating anything. Text is compared trimmed and case-insensitively (emails normalized the same way); the search
 * itself runs in SQL (db/items.ts `findDuplicateHits`).
 */
import {
  DUPLICATE_DETECTION_BUILT_IN_FIELDS,
  type DuplicateCheck,
  type DuplicateDetection,
  type DuplicateMatch,
} from "@stageline/shared";
import type { PrismaClient } from "../generated/prisma/client";
import * as items from "../db/items";
import type { DuplicateCriterion } from "../db/items";
import * as pipelines from "../db/pipelines";
import { readBlueprint, toItemResponse } from "./item-format";
import { checkMetadata, type Metadata } from "./item-metadata";
import { invalidReference } from "./references";

/** CONTRACT "Duplicate check": at most this many matches are returned. */
export const MAX_DUPLICATE_MATCHES = 50;

type BuiltInField = (typeof DUPLICATE_DETECTION_BUILT_IN_FIELDS)[number];

function isBuiltIn(field: string): field is BuiltInField {
  return (DUPLICATE_DETECTION_BUILT_IN_FIELDS as readonly string[]).includes(field);
}

/** The comparable values of a duplicate-check body: the built-ins at the top level, custom fields in `metadata`. */
export interface DuplicateInput {
  name?: string | null | undefined;
  contact_id?: string | null | undefined;
  source?: string | null | undefined;
  metadata: Metadata;
}

/**
 * The criteria to search with, one per configured field the input carries a value for (blank text counts as no
 * value). Returns null when nothing can match: no configured field present (`any`), or one of them missing (`all`).
 */
export function duplicateCriteria(detection: DuplicateDetection, input: DuplicateInput): DuplicateCriterion[] | null {
  const criteria: DuplicateCriterion[] = [];
  for (const field of detection.fields) {
    const value = isBuiltIn(field) ? input[field] : input.metadata[field];
    const present =
      (typeof value === "string" && value.trim() !== "") || typeof value === "number" || typeof value === "boolean";
    if (!present) {
      if (detection.match === "all") return null;
      continue;
    }
    if (isBuiltIn(field)) criteria.push({ field, kind: "column", value: value as string });
    else criteria.push({ field, kind: "metadata", value: value as string | number | boolean });
  }
  return criteria.length > 0 ? criteria : null;
}

/**
 * CONTRACT "Duplicate check": the items of `input.pipeline_id` matching the input, best match first (most matched
 * fields, then newest), each with `matched_on` (the matched field names in configuration order), at most 50.
 * An empty array when the pipeline has no duplicate detection or the input has no comparable value.
 * @throws DomainError 422 `invalid_reference` when the pipeline is not the company's, or `metadata` names an
 * unknown custom field or carries a value of the wrong type.
 */
export async function checkDuplicates(prisma: PrismaClient, companyId: string, input: DuplicateCheck): Promise<DuplicateMatch[]> {
  const pipeline = await pipelines.findPipeline(prisma, companyId, input.pipeline_id);
  if (!pipeline) {
    throw invalidReference([
      {
        path: "pipeline_id",
        message: `pipeline_id "${input.pipeline_id}" is not a pipeline of this company. List pipelines with GET /v1/ext/pipelines.`,
      },
    ]);
  }
  const blueprint = readBlueprint(pipeline.blueprint);
  // Values are compared trimmed, so they are validated trimmed too (" Ada@Example.com " is a valid email here).
  const trimmed = input.metadata && Object.fromEntries(Object.entries(input.metadata).map(([k, v]) => [k, typeof v === "string" ? v.trim() : v]));
  const metadata = checkMetadata(blueprint, trimmed, "update");
  if (!metadata.ok) throw invalidReference(metadata.errors);
  const detection = blueprint.duplicate_detection;
  if (!detection) return [];
  const criteria = duplicateCriteria(detection, {
    name: input.name,
    contact_id: input.contact_id,
    source: input.source,
    metadata: metadata.value,
  });
  if (!criteria) return [];

  const hits = await items.findDuplicateHits(prisma, {
    companyId,
    pipelineId: pipeline.id,
    criteria,
    match: detection.match,
    limit: MAX_DUPLICATE_MATCHES,
  });
  const rows = new Map((await items.findItemsByIds(prisma, companyId, hits.map((h) => h.id))).map((r) => [r.id, r]));
  return hits.flatMap((hit) => {
    const row = rows.get(hit.id);
    return row ? [{ ...toItemResponse(row), matched_on: hit.matchedOn }] : [];
  });
}

/**
 * Data access for pipelines, stages and statuses (tables `pipelines`, `stages`, `statuses`).
 * Every pipeline lookup is scoped to a company, so another tenant's ids read as unknown (CONTRACT "Errors", 404).
 * Functions take either the client or a transaction client, so services can call them inside `$transaction`; the
 * hot-path one (the pipeline-structure cache) runs raw SQL (db/sql.ts). A pipeline's short-id counter is its
 * sequence `pipeline_short_id_sequence(id)`, taken by db/items.ts `insertItemWithEvent`.
 */
import type { Prisma, PrismaClient } from "../generated/prisma/client";
import { query, queryIn } from "./sql";

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

/** The company's newest pipeline not archived (`created_at` desc, then id desc) with its blueprint, or null. */
export function findNewestPipeline(db: Db, companyId: string): Promise<PipelineRow | null> {
  return db.pipeline.findFirst({
    where: { companyId, archivedAt: null },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    select: PIPELINE_SELECT,
  });
}

/** A pipeline without its blueprint: what lists need. */
export type PipelineListRow = Omit<PipelineRow, "blueprint">;

/**
 * Every pipeline of the company that is not archived, newest first (`created_at` desc, then id desc), without
 * blueprints (a list never parses them: issue 19, a large blueprint per row exhausted the heap).
 */
export function listPipelines(db: Db, companyId: string): Promise<PipelineListRow[]> {
  return db.pipeline.findMany({
    where: { companyId, archivedAt: null },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    select: { id: true, name: true, shortIdPrefix: true, createdAt: true },
  });
}

/** A pipeline as the console's list shows it: its row and the sizes of its structure, never the blueprint itself. */
export interface PipelineSummaryRow extends PipelineListRow {
  stageCount: number;
  customFieldCount: number;
  /** When it was archived, or null while it is not. */
  archivedAt: Date | null;
}

/**
 * Every pipeline of the company, archived ones included, newest first, with its number of stages and of custom
 * fields, counted by the database (`jsonb_array_length` of the blueprint's `custom_fields`; 0 when it is not a
 * list): the blueprint itself is never sent to the application.
 */
export async function listPipelineSummaries(prisma: PrismaClient, companyId: string): Promise<PipelineSummaryRow[]> {
  const rows = await query<{
    id: string;
    name: string;
    short_id_prefix: string;
    created_at: Date;
    archived_at: Date | null;
    stage_count: number;
    custom_field_count: number;
  }>(
    prisma,
    `SELECT p.id, p.name, p.short_id_prefix, p.created_at, p.archived_at,
       (SELECT count(*) FROM stages s WHERE s.pipeline_id = p.id)::int AS stage_count,
       CASE WHEN jsonb_typeof(p.blueprint -> 'custom_fields') = 'array'
         THEN jsonb_array_length(p.blueprint -> 'custom_fields') ELSE 0 END AS custom_field_count
     FROM pipelines p
     WHERE p.company_id = $1
     ORDER BY p.created_at DESC, p.id DESC`,
    [companyId],
  );
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    shortIdPrefix: r.short_id_prefix,
    createdAt: r.created_at,
    archivedAt: r.archived_at,
    stageCount: r.stage_count,
    customFieldCount: r.custom_field_count,
  }));
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

/**
 * Which of `keys` are custom field keys of the company's pipeline `pipelineId` (or, when null, of any of the
 * company's pipelines, archived ones included), read from the stored blueprints in one statement. The check of a
 * subscription filter's `fields` (CONTRACT "Subscription filters").
 * @returns the subset of `keys` that exist (any order, no repeats).
 */
export async function findCustomFieldKeys(db: Db, companyId: string, pipelineId: string | null, keys: readonly string[]): Promise<string[]> {
  if (keys.length === 0) return [];
  const rows = await db.$queryRaw<{ key: string }[]>`
    SELECT DISTINCT f.value ->> 'key' AS key
    FROM pipelines p CROSS JOIN LATERAL jsonb_array_elements(
      CASE WHEN jsonb_typeof(p.blueprint -> 'custom_fields') = 'array' THEN p.blueprint -> 'custom_fields' ELSE '[]'::jsonb END
    ) AS f(value)
    WHERE p.company_id = ${companyId} AND (${pipelineId}::text IS NULL OR p.id = ${pipelineId}::text)
      AND f.value ->> 'key' = ANY (${[...keys]}::text[])`;
  return rows.map((r) => r.key);
}

/** The statuses a stage offers, in order (`position`, then id). */
export function listStatuses(db: Db, stageId: string): Promise<NamedRow[]> {
  return db.status.findMany({
    where: { stageId },
    orderBy: [{ position: "asc" }, { id: "asc" }],
    select: NAMED_SELECT,
  });
}

/** The first status of a stage (lowest `position`), or null when the stage offers none. */
export function findFirstStatus(db: Db, stageId: string): Promise<NamedRow | null> {
  return db.status.findFirst({
    where: { stageId },
    orderBy: [{ position: "asc" }, { id: "asc" }],
    select: NAMED_SELECT,
  });
}

/** A pipeline's archive state: its company (for the audit log) and when it was archived (null while it is not). */
export interface PipelineArchiveRow {
  id: string;
  companyId: string;
  name: string;
  archivedAt: Date | null;
}

const ARCHIVE_SELECT = { id: true, companyId: true, name: true, archivedAt: true } as const;

/**
 * The archive state of pipeline `pipelineId`, read from the database (never from the structure cache: it changes),
 * within company `companyId` when given (the admin CLI acts on any company's pipeline by id).
 * @returns null when the pipeline is unknown (or another company's).
 */
export function findPipelineArchive(db: Db, companyId: string | undefined, pipelineId: string): Promise<PipelineArchiveRow | null> {
  return db.pipeline.findFirst({ where: { id: pipelineId, ...(companyId !== undefined ? { companyId } : {}) }, select: ARCHIVE_SELECT });
}

/**
 * Whether the company's pipeline `pipelineId` is archived, in one raw statement (db/sql.ts), so that it also runs
 * inside an enclosing transaction (`inEnclosingTransaction`: an atomic batch), where Prisma ORM calls cannot.
 * @returns null when the pipeline is unknown or another company's; else its `archivedAt`.
 */
export async function readPipelineArchivedAt(prisma: PrismaClient, companyId: string, pipelineId: string): Promise<{ archivedAt: Date | null } | null> {
  const rows = await query<{ archived_at: Date | null }>(prisma, `SELECT archived_at FROM pipelines WHERE id = $1 AND company_id = $2`, [pipelineId, companyId]);
  return rows[0] ? { archivedAt: rows[0].archived_at } : null;
}

/**
 * Archives (`archivedAt` a time) or restores (`archivedAt` null) pipeline `pipelineId`, within company `companyId`
 * when given. Only a pipeline in the other state changes (one conditional UPDATE), so archiving an archived pipeline
 * keeps its first archive time and reports no change, even when two requests race.
 * @returns the row after the call and whether this call changed it, or null when the pipeline is unknown (or
 *   another company's).
 */
export async function setPipelineArchived(
  db: Db,
  companyId: string | undefined,
  pipelineId: string,
  archivedAt: Date | null,
): Promise<{ row: PipelineArchiveRow; changed: boolean } | null> {
  const where = { id: pipelineId, ...(companyId !== undefined ? { companyId } : {}) };
  const { count } = await db.pipeline.updateMany({
    where: { ...where, archivedAt: archivedAt ? null : { not: null } },
    data: { archivedAt },
  });
  const row = await db.pipeline.findFirst({ where, select: ARCHIVE_SELECT });
  return row ? { row, changed: count > 0 } : null;
}

/** A stage with the statuses it offers, in order (the first is the default status). */
export interface StageStructure extends NamedRow {
  statuses: NamedRow[];
}

/** A pipeline with its stages and statuses in order: everything item validation and formatting needs. */
export interface PipelineStructure extends PipelineRow {
  companyId: string;
  stages: StageStructure[];
}

interface StructureRow {
  id: string;
  company_id: string;
  name: string;
  short_id_prefix: string;
  blueprint: unknown;
  created_at: Date;
  /** The stages in order, each with its statuses in order, aggregated by the database. */
  stages: StageStructure[];
}

const namesByStructure = new WeakMap<PipelineStructure, Map<string, string>>();

/**
 * The names of a pipeline structure's stages and statuses by id (ids are unique across both tables' uuids), built
 * once per cached structure: item reads take names from here instead of joining `stages` and `statuses`.
 */
export function structureNames(structure: PipelineStructure): Map<string, string> {
  let names = namesByStructure.get(structure);
  if (!names) {
    names = new Map();
    for (const stage of structure.stages) {
      names.set(stage.id, stage.name);
      for (const status of stage.statuses) names.set(status.id, status.name);
    }
    namesByStructure.set(structure, names);
  }
  return names;
}

/**
 * Reads the company's pipeline `pipelineId` with its stages (`position`, then id) and each stage's statuses
 * (`position`, then id) in one statement, bypassing the cache; through `tx` when called inside a transaction.
 * The statement returns ONE row: the pipeline's columns, its blueprint once, and the stages with their statuses
 * aggregated into a JSON list by the database. (Issue 19: a join of stages x statuses repeated the blueprint on every
 * row, 15,000 copies of a 300 KB blueprint.)
 * @returns null when the pipeline is unknown or another company's.
 */
export async function loadPipelineStructure(
  prisma: PrismaClient,
  companyId: string,
  pipelineId: string,
  tx?: Prisma.TransactionClient,
): Promise<PipelineStructure | null> {
  const rows = await queryIn<StructureRow>(
    prisma,
    tx,
    `SELECT p.id, p.company_id, p.name, p.short_id_prefix, p.blueprint, p.created_at,
       COALESCE((
         SELECT jsonb_agg(jsonb_build_object('id', s.id, 'name', s.name, 'statuses', COALESCE((
             SELECT jsonb_agg(jsonb_build_object('id', st.id, 'name', st.name) ORDER BY st.position, st.id)
             FROM statuses st WHERE st.stage_id = s.id
           ), '[]'::jsonb)) ORDER BY s.position, s.id)
         FROM stages s WHERE s.pipeline_id = p.id
       ), '[]'::jsonb) AS stages
     FROM pipelines p
     WHERE p.id = $1 AND p.company_id = $2`,
    [pipelineId, companyId],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    id: row.id,
    companyId: row.company_id,
    name: row.name,
    shortIdPrefix: row.short_id_prefix,
    blueprint: row.blueprint ?? {},
    createdAt: row.created_at,
    stages: row.stages,
  };
}

/**
 * In-process cache of pipeline structures, one per database (keyed by its Prisma client), at most
 * `PIPELINE_CACHE_SIZE` pipelines each, least recently used evicted first.
 *
 * Why caching is safe: a pipeline, its stages, statuses and blueprint never change once stored. Nothing in the
 * server updates or deletes them: the external API only reads pipelines (spec "Pipelines"), and the admin side only
 * imports new ones (db/pipeline-import.ts, one transaction); the short-id counter is a sequence, not a column.
 * The one mutable column, `archived_at`, is not part of the cached structure: item creation checks it in its own
 * insert statement (db/items.ts), so every process sees an archive at once.
 * Deleting a company cascades to its pipelines, but also to its API keys, so no request can
 * reach them afterwards. Every hit checks `company_id`, so one company never sees another's pipeline.
 */
export const PIPELINE_CACHE_SIZE = 1000;
const structureCaches = new WeakMap<PrismaClient, Map<string, PipelineStructure>>();

function cacheOf(prisma: PrismaClient): Map<string, PipelineStructure> {
  let cache = structureCaches.get(prisma);
  if (!cache) {
    cache = new Map();
    structureCaches.set(prisma, cache);
  }
  return cache;
}

/**
 * The company's pipeline `pipelineId` with stages and statuses, from the cache when present, else read once
 * (`loadPipelineStructure`, through `tx` inside a transaction) and cached. Unknown ids are not cached.
 * @returns null when the pipeline is unknown or another company's (also when another company's is cached).
 */
export async function findPipelineStructure(
  prisma: PrismaClient,
  companyId: string,
  pipelineId: string,
  tx?: Prisma.TransactionClient,
): Promise<PipelineStructure | null> {
  const cache = cacheOf(prisma);
  const hit = cache.get(pipelineId);
  if (hit) {
    if (hit.companyId !== companyId) return null;
    cache.delete(pipelineId); // re-insert: Map order is the recency order
    cache.set(pipelineId, hit);
    return hit;
  }
  const loaded = await loadPipelineStructure(prisma, companyId, pipelineId, tx);
  if (loaded) rememberPipelineStructure(prisma, loaded);
  return loaded;
}

/**
 * Reads the pipeline again (bypassing the cache; through `tx` inside a transaction) and replaces or drops the
 * cached copy; see `findPipelineStructure`.
 */
export async function refreshPipelineStructure(
  prisma: PrismaClient,
  companyId: string,
  pipelineId: string,
  tx?: Prisma.TransactionClient,
): Promise<PipelineStructure | null> {
  const loaded = await loadPipelineStructure(prisma, companyId, pipelineId, tx);
  if (loaded) rememberPipelineStructure(prisma, loaded);
  else if (cacheOf(prisma).get(pipelineId)?.companyId === companyId) cacheOf(prisma).delete(pipelineId);
  return loaded;
}

function rememberPipelineStructure(prisma: PrismaClient, structure: PipelineStructure): void {
  const cache = cacheOf(prisma);
  cache.delete(structure.id);
  cache.set(structure.id, structure);
  while (cache.size > PIPELINE_CACHE_SIZE) cache.delete(cache.keys().next().value!);
}

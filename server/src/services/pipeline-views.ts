/**
 * Read-only views of pipelines and their items for the console (issue 10, "Pipelines, items, audit"): a pipeline
 * with its stages, statuses, custom fields and duplicate rules; a keyset-paginated page of its items from the same
 * data layer as the API's item list (db/items.ts `listItems`, which also serves GET /v1/ext/items), searchable by
 * name or short ID; one item with its custom fields (labelled from the blueprint) and its tasks.
 * Every lookup is scoped to the caller's company: another company's pipeline or item is 404 `not_found`.
 */
import { decodeKeysetCursor, type DuplicateDetection, type Item, type Task } from "@stageline/shared";
import type { AppContext } from "../context";
import * as items from "../db/items";
import * as pipelines from "../db/pipelines";
import * as tasks from "../db/tasks";
import { notFound } from "./errors";
import type { ItemRecord } from "../db/item-record";
import { readBlueprint, toItemResponse } from "./item-format";
import { toPage, type Page } from "./keyset-page";
import { customFieldsOf, type PipelineField } from "./pipelines";
import { withAssignees } from "./tasks";

/** Items per page of the console's item table. */
export const ITEM_PAGE_SIZE = 50;

/** Tasks an item page shows at most (newest first). */
export const ITEM_TASKS_SHOWN = 100;

/** Longest search text, in characters. */
export const SEARCH_MAX = 200;

/** A pipeline as the console shows it. */
export interface PipelineOverview {
  id: string;
  name: string;
  shortIdPrefix: string;
  createdAt: Date;
  /** Stages in order, each with its statuses in order (the first is the default status). */
  stages: pipelines.StageStructure[];
  customFields: PipelineField[];
  /** The duplicate rule, or null when the pipeline has none. */
  duplicateDetection: DuplicateDetection | null;
  /** When it was archived, or null while it is not (read from the database, not the structure cache). */
  archivedAt: Date | null;
}

/** A pipeline as the console's list shows it: name, prefix, creation and the sizes of its structure. */
export type PipelineSummary = pipelines.PipelineSummaryRow;

/**
 * The company's pipelines, newest first, each with its number of stages and custom fields (counted by the database:
 * no blueprint, stage or status is loaded, issue 19). A pipeline's stages, statuses and fields are shown on its own
 * page ({@link describePipeline}).
 */
export function listPipelineSummaries(ctx: AppContext, companyId: string): Promise<PipelineSummary[]> {
  return pipelines.listPipelineSummaries(ctx.prisma, companyId);
}

/**
 * The company's pipeline `pipelineId` (archived or not) with its stages, statuses, custom fields, duplicate rule
 * and archive time.
 * @throws DomainError 404 `not_found` when unknown or another company's.
 */
export async function describePipeline(ctx: AppContext, companyId: string, pipelineId: string): Promise<PipelineOverview> {
  const structure = await pipelines.findPipelineStructure(ctx.prisma, companyId, pipelineId);
  const archive = structure && (await pipelines.findPipelineArchive(ctx.prisma, companyId, pipelineId));
  if (!structure || !archive) throw notFound("Pipeline", pipelineId);
  return {
    id: structure.id,
    name: structure.name,
    shortIdPrefix: structure.shortIdPrefix,
    createdAt: structure.createdAt,
    stages: structure.stages,
    customFields: customFieldsOf(structure.blueprint),
    duplicateDetection: readBlueprint(structure.blueprint).duplicate_detection ?? null,
    archivedAt: archive.archivedAt,
  };
}

/** One item row of the console's table, with its keyset position. */
export type ItemListRow = Item & { createdAt: Date; id: string };

/**
 * One page of the pipeline's items, newest first ({@link ITEM_PAGE_SIZE} a page, keyset pagination), through the
 * API's item list (db/items.ts `listItems`, with its `short_id` and `q` filters). `search` (trimmed; empty means
 * none) finds the item with that short ID (case-insensitive, e.g. `sales-12`); any other text, or a short ID no item
 * has, matches part of the name (case-insensitive, `%` and `_` literal).
 * @throws DomainError 404 `not_found` for another company's pipeline; 400 `validation_failed` for a cursor the
 *   console did not issue.
 */
export async function listPipelineItems(
  ctx: AppContext,
  companyId: string,
  pipelineId: string,
  options: { search?: string | undefined; cursor?: string | undefined } = {},
): Promise<Page<ItemListRow>> {
  const after = options.cursor ? decodeKeysetCursor(options.cursor) : undefined;
  const pipeline = await pipelines.findPipelineStructure(ctx.prisma, companyId, pipelineId);
  if (!pipeline) throw notFound("Pipeline", pipelineId);
  const search = options.search?.trim().slice(0, SEARCH_MAX) || undefined;
  const filter = { companyId, pipelineId, after, take: ITEM_PAGE_SIZE + 1 };
  // A short ID finds its item; any other text (or a short ID no item has) searches the names.
  let rows = search && SHORT_ID_SHAPE.test(search) ? await items.listItems(ctx.prisma, { ...filter, shortId: search }) : [];
  if (rows.length === 0) rows = await items.listItems(ctx.prisma, { ...filter, search });
  return toPage(rows.map(toListRow), ITEM_PAGE_SIZE);
}

/** What a short ID looks like: the pipeline's prefix, a hyphen and a number, e.g. `SALES-12`. */
const SHORT_ID_SHAPE = /^[A-Za-z0-9]+-\d+$/;

function toListRow(record: ItemRecord): ItemListRow {
  return { ...toItemResponse(record), id: record.id, createdAt: record.createdAt };
}

/** A custom field of an item: its blueprint label and type, and the item's value (undefined when not set). */
export interface ItemFieldValue {
  key: string;
  label: string;
  type: string;
  value: unknown;
}

/** An item as its console page shows it. */
export interface ItemOverview {
  item: Item;
  /** The blueprint's custom fields in order, with this item's values. */
  fields: ItemFieldValue[];
  /** Its tasks, newest first, at most {@link ITEM_TASKS_SHOWN}. */
  tasks: Task[];
}

/**
 * The company's item `itemId` of pipeline `pipelineId`, with its custom fields and tasks.
 * @throws DomainError 404 `not_found` when the item is unknown, another company's or in another pipeline.
 */
export async function describeItem(ctx: AppContext, companyId: string, pipelineId: string, itemId: string): Promise<ItemOverview> {
  const record = await items.readItem(ctx.prisma, companyId, itemId);
  if (!record || record.pipeline.id !== pipelineId) throw notFound("Item", itemId);
  const item = toItemResponse(record);
  const fields = readBlueprint(record.pipeline.blueprint).custom_fields.map((f) => ({
    key: f.key,
    label: f.label,
    type: f.type,
    value: (record.metadata as Record<string, unknown> | null)?.[f.key],
  }));
  const rows = await tasks.listTasks(ctx.prisma, companyId, { itemId }, undefined, ITEM_TASKS_SHOWN);
  return { item, fields, tasks: (await withAssignees(ctx, companyId, rows)).map((row) => row.task) };
}

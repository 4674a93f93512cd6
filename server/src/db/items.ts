/**
 * Data access for items (table `items`). Every read is scoped to a company, so another tenant's item reads as
 * unknown (CONTRACT "Errors", 404). Rows come back in the `ItemRecord` shape `toItemResponse` formats.
 */
import { Prisma } from "../generated/prisma/client";
import { KEYSET_ORDER, keysetWhere, type KeysetPosition } from "../http/keyset-cursor";
import { ITEM_INCLUDE, type ItemRecord } from "../services/item-format";
import type { Db } from "./pipelines";

/** The company's item `itemId` with its pipeline, stage and status names, or null when unknown or another company's. */
export function findItem(db: Db, companyId: string, itemId: string): Promise<ItemRecord | null> {
  return db.item.findFirst({ where: { id: itemId, companyId }, include: ITEM_INCLUDE });
}

/** The company's items with these ids (any order; unknown ids are skipped). */
export function findItemsByIds(db: Db, companyId: string, itemIds: string[]): Promise<ItemRecord[]> {
  if (itemIds.length === 0) return Promise.resolve([]);
  return db.item.findMany({ where: { id: { in: itemIds }, companyId }, include: ITEM_INCLUDE });
}

/**
 * Locks the company's item `itemId` (`SELECT ... FOR UPDATE`) until the transaction ends, so concurrent updates of
 * one item run one after the other and each sees the version the previous one wrote.
 * @returns false when the item is unknown or another company's.
 */
export async function lockItem(tx: Prisma.TransactionClient, companyId: string, itemId: string): Promise<boolean> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM items WHERE id = ${itemId} AND company_id = ${companyId} FOR UPDATE`;
  return rows.length > 0;
}

/** Filters and page position of an item list (spec "Items" list query, CONTRACT "Lists"). */
export interface ItemListFilter {
  companyId: string;
  pipelineId?: string | undefined;
  stageId?: string | undefined;
  statusId?: string | undefined;
  /** Only items created strictly after this instant. */
  createdAfter?: Date | undefined;
  /** Keyset position: only items after this one in (created_at desc, id desc) order. */
  after?: KeysetPosition | undefined;
  /** Rows to fetch (the caller asks for `limit + 1` to learn whether a next page exists). */
  take: number;
}

/**
 * One page of the company's items, newest first (`created_at` desc, id desc). The page position is a keyset
 * condition on (created_at, id); the extra `created_at <= cursor` bound lets PostgreSQL start the index range scan
 * on (company_id, created_at desc, id desc) at the cursor, so a page costs the same at any depth.
 */
export function listItems(db: Db, filter: ItemListFilter): Promise<ItemRecord[]> {
  const where: Prisma.ItemWhereInput = {
    companyId: filter.companyId,
    AND: [
      filter.pipelineId !== undefined ? { pipelineId: filter.pipelineId } : {},
      filter.stageId !== undefined ? { stageId: filter.stageId } : {},
      filter.statusId !== undefined ? { statusId: filter.statusId } : {},
      filter.createdAfter !== undefined ? { createdAt: { gt: filter.createdAfter } } : {},
      keysetWhere(filter.after),
    ],
  };
  return db.item.findMany({ where, orderBy: KEYSET_ORDER, take: filter.take, include: ITEM_INCLUDE });
}

/** The columns of a new item. */
export interface NewItem {
  companyId: string;
  pipelineId: string;
  stageId: string;
  statusId: string;
  shortId: string;
  name: string;
  contactId: string | null;
  source: string;
  metadata: Record<string, unknown>;
}

/** Inserts an item (version 1) and returns it with its pipeline, stage and status names. */
export function insertItem(tx: Prisma.TransactionClient, item: NewItem): Promise<ItemRecord> {
  return tx.item.create({
    data: { ...item, metadata: item.metadata as Prisma.InputJsonObject, version: 1 },
    include: ITEM_INCLUDE,
  });
}

/** The columns an item update may change. */
export interface ItemChanges {
  name?: string;
  stageId?: string;
  statusId?: string;
  contactId?: string | null;
  source?: string;
  metadata?: Record<string, unknown>;
}

/**
 * Applies `changes` to item `itemId` only if its version is still `expectedVersion`, incrementing the version and
 * setting `updated_at` (optimistic locking: `UPDATE ... WHERE id = ? AND version = ?`).
 * @returns the updated item, or null when no row had that version (a concurrent writer got there first).
 */
export async function updateItemAtVersion(
  tx: Prisma.TransactionClient,
  itemId: string,
  expectedVersion: number,
  changes: ItemChanges,
  now: Date,
): Promise<ItemRecord | null> {
  const { metadata, ...columns } = changes;
  const { count } = await tx.item.updateMany({
    where: { id: itemId, version: expectedVersion },
    data: {
      ...columns,
      ...(metadata !== undefined ? { metadata: metadata as Prisma.InputJsonObject } : {}),
      version: { increment: 1 },
      updatedAt: now,
    },
  });
  if (count === 0) return null;
  return tx.item.findUnique({ where: { id: itemId }, include: ITEM_INCLUDE });
}

/** Built-in item columns duplicate detection can compare (shared DUPLICATE_DETECTION_BUILT_IN_FIELDS). */
const DUPLICATE_COLUMNS = {
  name: Prisma.sql`i.name`,
  contact_id: Prisma.sql`i.contact_id`,
  source: Prisma.sql`i.source`,
} as const;

/** One field to compare in a duplicate search. */
export type DuplicateCriterion =
  | { field: keyof typeof DUPLICATE_COLUMNS; kind: "column"; value: string }
  | { field: string; kind: "metadata"; value: string | number | boolean };

/** Characters trimmed from both sides before comparing text. */
const TRIM_CHARACTERS = " \t\r\n";

/**
 * The SQL condition "this item's `criterion.field` equals the input value". Text is compared trimmed and
 * case-insensitively on both sides (`lower(btrim(...))`), which also normalizes emails; numbers and booleans are
 * compared as JSON values. Field keys and values are bound parameters, never spliced into the SQL.
 */
function duplicateCondition(criterion: DuplicateCriterion): Prisma.Sql {
  const normalize = (expr: Prisma.Sql) => Prisma.sql`lower(btrim(${expr}, ${TRIM_CHARACTERS}))`;
  const input = (value: string) => normalize(Prisma.sql`${value}::text`);
  if (criterion.kind === "column") {
    return Prisma.sql`${normalize(DUPLICATE_COLUMNS[criterion.field])} = ${input(criterion.value)}`;
  }
  if (typeof criterion.value === "string") {
    return Prisma.sql`(jsonb_typeof(i.metadata -> ${criterion.field}::text) = 'string' AND ${normalize(
      Prisma.sql`i.metadata ->> ${criterion.field}::text`,
    )} = ${input(criterion.value)})`;
  }
  return Prisma.sql`i.metadata -> ${criterion.field}::text = ${JSON.stringify(criterion.value)}::jsonb`;
}

/** A duplicate-search hit: the item id and the fields that matched, in criteria order. */
export interface DuplicateHit {
  id: string;
  matchedOn: string[];
}

/**
 * Items of one pipeline of the company that match the criteria: with `match: "any"` at least one criterion holds,
 * with `"all"` every one does. Best match first (most matched fields, then newest), at most `limit`.
 * Done in one parameterized SQL query (`$queryRaw`).
 */
export async function findDuplicateHits(
  db: Db,
  search: { companyId: string; pipelineId: string; criteria: DuplicateCriterion[]; match: "any" | "all"; limit: number },
): Promise<DuplicateHit[]> {
  if (search.criteria.length === 0) return [];
  const conditions = search.criteria.map(duplicateCondition);
  const matched = Prisma.join(
    search.criteria.map((c, i) => Prisma.sql`CASE WHEN ${conditions[i]!} THEN ${c.field}::text END`),
  );
  const filter = Prisma.join(conditions, search.match === "all" ? " AND " : " OR ");
  const rows = await db.$queryRaw<{ id: string; matched_on: string[] }[]>`
    SELECT m.id, m.matched_on FROM (
      SELECT i.id, i.created_at, array_remove(ARRAY[${matched}], NULL) AS matched_on
      FROM items i
      WHERE i.company_id = ${search.companyId} AND i.pipeline_id = ${search.pipelineId} AND (${filter})
    ) m
    ORDER BY cardinality(m.matched_on) DESC, m.created_at DESC, m.id DESC
    LIMIT ${search.limit}`;
  return rows.map((r) => ({ id: r.id, matchedOn: r.matched_on }));
}

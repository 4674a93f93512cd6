/**
 * Data access for items (table `items`). Every read is scoped to a company, so another tenant's item reads as
 * unknown (CONTRACT "Errors", 404). Rows come back in the `ItemRecord` shape `toItemResponse` formats.
 */
import { Prisma, type PrismaClient } from "../generated/prisma/client";
import type { KeysetPosition } from "./keyset";
import { ITEM_INCLUDE, type ItemRecord } from "./item-record";
import { findPipelineStructure, refreshPipelineStructure, structureNames, type Db, type PipelineStructure } from "./pipelines";
import type { JsonAroundSlot } from "./json-slot";
import { eventParams, fanOutCtes, insertEventsCte, type OutboxEventToInsert } from "./outbox";
import {
  CLAIM_SELECT,
  CLAIM_TAKEN,
  claimCtes,
  claimResult,
  retryOnStoredKeyConflict,
  storeCreatedCte,
  type ClaimRow,
  type IdempotencyClaim,
  type StoredResponse,
} from "./idempotency";
import { lockedCompanyCte } from "./companies";
import { query } from "./sql";

/** An item row as the raw-SQL reads below select it. */
interface ItemRow {
  id: string;
  pipeline_id: string;
  stage_id: string;
  status_id: string;
  short_id: string;
  name: string;
  contact_id: string | null;
  source: string;
  metadata: unknown;
  version: number;
  /** Milliseconds since the epoch (float8): cheaper to turn into a Date than parsing timestamp text. */
  created_ms: number;
  updated_ms: number;
}

/**
 * The item columns, without joins: pipeline, stage and status names come from the cached pipeline structure
 * (db/pipelines.ts `findPipelineStructure`; structures never change once stored).
 */
const ITEM_SELECT = `SELECT i.id, i.pipeline_id, i.stage_id, i.status_id, i.short_id, i.name, i.contact_id, i.source,
    i.metadata, i.version,
    (extract(epoch FROM i.created_at) * 1000)::float8 AS created_ms, (extract(epoch FROM i.updated_at) * 1000)::float8 AS updated_ms
  FROM items i`;

/**
 * Turns item rows of company `companyId` into `ItemRecord`s, with the names and blueprint of each row's pipeline
 * from the pipeline-structure cache (one lookup per pipeline on the page, so `readBlueprint` parses a blueprint
 * once). A stage or status the cached copy lacks (impossible while structures are immutable) re-reads it once.
 * @throws Error when a row's pipeline, stage or status cannot be found even after re-reading (corrupt data).
 */
async function toItemRecords(prisma: PrismaClient, companyId: string, rows: ItemRow[]): Promise<ItemRecord[]> {
  const structures = new Map<string, PipelineStructure>();
  const records: ItemRecord[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    let structure = structures.get(row.pipeline_id) ?? (await findPipelineStructure(prisma, companyId, row.pipeline_id));
    let names = structure && structureNames(structure);
    if (!names?.has(row.stage_id) || !names.has(row.status_id)) {
      structure = await refreshPipelineStructure(prisma, companyId, row.pipeline_id);
      names = structure && structureNames(structure);
    }
    const stageName = names?.get(row.stage_id);
    const statusName = names?.get(row.status_id);
    if (!structure || stageName === undefined || statusName === undefined) {
      throw new Error(`item ${row.id}: stage ${row.stage_id} or status ${row.status_id} not in pipeline ${row.pipeline_id}`);
    }
    structures.set(row.pipeline_id, structure);
    records[i] = {
      id: row.id,
      shortId: row.short_id,
      name: row.name,
      contactId: row.contact_id,
      source: row.source,
      metadata: row.metadata,
      version: Number(row.version),
      createdAt: new Date(Number(row.created_ms)),
      updatedAt: new Date(Number(row.updated_ms)),
      pipeline: { id: row.pipeline_id, name: structure.name, blueprint: structure.blueprint },
      stage: { id: row.stage_id, name: stageName },
      status: { id: row.status_id, name: statusName },
    };
  }
  return records;
}

/**
 * The company's item `itemId` with its pipeline, stage and status names (one raw SELECT, db/sql.ts; names from the
 * cached pipeline structure), or null when unknown or another company's.
 */
export async function readItem(prisma: PrismaClient, companyId: string, itemId: string): Promise<ItemRecord | null> {
  const rows = await query<ItemRow>(prisma, `${ITEM_SELECT} WHERE i.id = $1 AND i.company_id = $2`, [itemId, companyId], {
    name: "read-item",
  });
  const [record] = await toItemRecords(prisma, companyId, rows);
  return record ?? null;
}

/** The company's items with these ids (any order; unknown ids are skipped). */
export function findItemsByIds(db: Db, companyId: string, itemIds: string[]): Promise<ItemRecord[]> {
  if (itemIds.length === 0) return Promise.resolve([]);
  return db.item.findMany({ where: { id: { in: itemIds }, companyId }, include: ITEM_INCLUDE });
}

/** Filters and page position of an item list (spec "Items" list query, CONTRACT "Lists"). */
export interface ItemListFilter {
  companyId: string;
  pipelineId?: string | undefined;
  stageId?: string | undefined;
  statusId?: string | undefined;
  /** Exact short id, case-insensitive (CONTRACT "Lists" `short_id`). */
  shortId?: string | undefined;
  /** Exact name, case-insensitive; the caller trims it (CONTRACT "Lists" `name`). */
  name?: string | undefined;
  /** Substring of the name, case-insensitive, taken literally (`%` and `_` match themselves) (CONTRACT "Lists" `q`). */
  search?: string | undefined;
  /** Only items created strictly after this instant. */
  createdAfter?: Date | undefined;
  /** Only items updated strictly after this instant. */
  updatedAfter?: Date | undefined;
  /** Keyset position: only items after this one in (created_at desc, id desc) order. */
  after?: KeysetPosition | undefined;
  /** Rows to fetch (the caller asks for `limit + 1` to learn whether a next page exists). */
  take: number;
}

/** `text` for a LIKE pattern that matches it literally: `\`, `%` and `_` escaped (LIKE's default escape is `\`). */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * One page of the company's items, newest first (`created_at` desc, id desc), in one raw SELECT (db/sql.ts), with
 * pipeline, stage and status names from the cached pipeline structures. The page position is a keyset condition on (created_at, id); the
 * extra `created_at <= cursor` bound lets PostgreSQL start the index range scan on
 * (company_id, created_at desc, id desc) at the cursor, so a page costs the same at any depth. Each filter has an
 * index that keeps a page's cost independent of the table's size (migration 20261123100001_item_list_filters):
 * pipeline, stage and status scan (x_id, created_at desc, id desc) in list order; `name` scans
 * (company_id, lower(name), created_at desc, id desc); `short_id` looks up (company_id, lower(short_id)); `q` reads
 * the pg_trgm GIN index on lower(name) and `updated_after` the (company_id, updated_at) range, whose matches are then
 * ordered. Every value is a bound parameter; the statement is prepared once per filter combination
 * (db/sql.ts `QueryOptions.name`).
 */
export async function listItems(prisma: PrismaClient, filter: ItemListFilter): Promise<ItemRecord[]> {
  const params: unknown[] = [filter.companyId];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const where = ["i.company_id = $1"];
  if (filter.pipelineId !== undefined) where.push(`i.pipeline_id = ${param(filter.pipelineId)}`);
  if (filter.stageId !== undefined) where.push(`i.stage_id = ${param(filter.stageId)}`);
  if (filter.statusId !== undefined) where.push(`i.status_id = ${param(filter.statusId)}`);
  if (filter.shortId !== undefined) where.push(`lower(i.short_id) = lower(${param(filter.shortId)}::text)`);
  if (filter.name !== undefined) where.push(`lower(i.name) = lower(${param(filter.name)}::text)`);
  if (filter.search !== undefined) where.push(`lower(i.name) LIKE ${param(`%${likeLiteral(filter.search.toLowerCase())}%`)}::text`);
  if (filter.createdAfter !== undefined) where.push(`i.created_at > ${param(filter.createdAfter)}::timestamptz`);
  if (filter.updatedAfter !== undefined) where.push(`i.updated_at > ${param(filter.updatedAfter)}::timestamptz`);
  if (filter.after !== undefined) {
    const at = param(filter.after.createdAt);
    const id = param(filter.after.id);
    where.push(`i.created_at <= ${at}::timestamptz`);
    where.push(`(i.created_at < ${at}::timestamptz OR (i.created_at = ${at}::timestamptz AND i.id < ${id}))`);
  }
  // One prepared statement per combination of filters: the text depends only on which filters are present.
  const shape = [
    filter.pipelineId,
    filter.stageId,
    filter.statusId,
    filter.shortId,
    filter.name,
    filter.search,
    filter.createdAfter,
    filter.updatedAfter,
    filter.after,
  ]
    .map((f) => (f === undefined ? "0" : "1"))
    .join("");
  const rows = await query<ItemRow>(
    prisma,
    `${ITEM_SELECT} WHERE ${where.join(" AND ")} ORDER BY i.created_at DESC, i.id DESC LIMIT ${param(filter.take)}::int`,
    params,
    { name: `list-items-${shape}` },
  );
  return toItemRecords(prisma, filter.companyId, rows);
}

/** The columns of a new item. */
export interface NewItem {
  companyId: string;
  pipelineId: string;
  stageId: string;
  statusId: string;
  name: string;
  contactId: string | null;
  source: string;
  metadata: Record<string, unknown>;
}

/** A new item with its app-generated id (uuid v7) and creation time (also its `updated_at`). */
export interface ItemToInsert extends NewItem {
  id: string;
  createdAt: Date;
}

/**
 * The outbox event of a new item: its id (uuid v7), name and the exact JSON text to deliver, given around the
 * item's `short_id` value, which the statement fills in (db/json-slot.ts).
 */
export interface ItemEventToInsert {
  id: string;
  type: string;
  payload: JsonAroundSlot;
}

/**
 * Inserts an item (version 1), its outbox event and one pending delivery per active subscription of the company to
 * that event name, in ONE statement (data-modifying CTEs): atomic on its own, so no BEGIN/COMMIT round trips, and
 * the same outcome as an item insert + db/outbox.ts `insertEvent` and `fanOutEvent` in one transaction.
 * - `short_id` is `<prefix>-<n>`, n taken from the pipeline's sequence (`pipeline_short_id_sequence(id)`, migration
 *   20261121090000_short_id_sequences) inside the statement, after the company and pipeline rows are locked
 *   `FOR KEY SHARE` (`lockedPipelineCtes`: a concurrent delete of either cannot break the statement); never reused,
 *   a failed insert leaves a gap.
 * - The payload is stored in the `json` column as given with the short id spliced in, so its key order is kept.
 * - The deliveries are queued by db/outbox.ts `fanOutCtes`, the same fan-out as `fanOutEvent` (subscriptions read
 *   `FOR KEY SHARE`).
 * - With `idempotency` (CONTRACT "Idempotency"), the SAME statement first takes the key's advisory lock without
 *   waiting (db/idempotency.ts) and reads its stored response; only when the lock is taken and nothing is stored does
 *   it insert, and then it also stores the 201 response (the event payload's text: the Item as returned) with
 *   `location`. Still one round trip. A response stored by a concurrent statement after this one's snapshot makes the
 *   key's primary key refuse the insert: the statement then runs again (after deleting an expired row of the key).
 * @returns the item's short id and how many deliveries were queued; `shortId` null (and nothing written) when the
 * pipeline is not the company's, or with `idempotency` when the key is in use (`inUse`) or has a stored response
 * (`stored`).
 * @throws the database error when a constraint fails (nothing is written then).
 */
export async function insertItemWithEvent(
  prisma: PrismaClient,
  item: ItemToInsert,
  event: ItemEventToInsert,
  idempotency?: { claim: IdempotencyClaim; location: string },
): Promise<{ shortId: string | null; deliveries: number; inUse?: boolean; stored?: StoredResponse }> {
  const params: unknown[] = [
    item.id,
    item.companyId,
    item.pipelineId,
    item.stageId,
    item.statusId,
    item.name,
    item.contactId,
    item.source,
    JSON.stringify(item.metadata),
    item.createdAt,
    event.id,
    event.type,
    event.payload.before,
    event.payload.after,
  ];
  if (!idempotency) {
    const rows = await query<{ short_id: string | null; deliveries: number }>(
      prisma,
      `WITH ${lockedPipelineCtes("true")}, ${INSERT_ITEM_CTES}
       SELECT (SELECT short_id FROM new_item) AS short_id, (SELECT count(*) FROM queued)::int AS deliveries`,
      params,
      { name: "insert-item-with-event" },
    );
    return { shortId: rows[0]?.short_id ?? null, deliveries: Number(rows[0]?.deliveries ?? 0) };
  }
  const { claim, location } = idempotency;
  params.push(claim.key, claim.requestHash, location, claim.ttlSeconds);
  const rows = await retryOnStoredKeyConflict(prisma, claim, () =>
    query<{ short_id: string | null; deliveries: number } & ClaimRow>(
      prisma,
      `WITH ${claimCtes("$2", "$15")}, ${lockedPipelineCtes(CLAIM_TAKEN)}, ${INSERT_ITEM_CTES}, ${storeCreatedCte("new_item", {
        company: "$2",
        key: "$15",
        hash: "$16",
        body: "$13 || to_json(new_item.short_id)::text || $14",
        location: "$17",
        ttl: "$18",
      })}
       SELECT (SELECT short_id FROM new_item) AS short_id, (SELECT count(*) FROM queued)::int AS deliveries, ${CLAIM_SELECT.columns}
       ${CLAIM_SELECT.from}`,
      params,
      { name: "insert-item-with-event-idempotent" },
    ),
  );
  const row = rows[0]!;
  const claimed = claimResult(row);
  if (claimed) return { shortId: null, deliveries: 0, ...claimed };
  return { shortId: row.short_id ?? null, deliveries: Number(row.deliveries ?? 0) };
}

/**
 * The CTEs that lock the company's row, then the pipeline's (`FOR KEY SHARE`, the lock the items' foreign keys take
 * anyway, shared by concurrent creates), and only then take the next short-id number (`short`), when `condition`
 * (SQL) holds. Why: an operator may delete the pipeline, or the company with everything in it, while creates are in
 * flight. Without the locks, a create could resolve the pipeline's sequence just before the delete dropped it
 * (`could not open relation with OID`) or lock the rows in the opposite order to the cascade (`deadlock detected`).
 * With them, the delete waits for the creates that got there first, and a create that comes after the delete finds
 * no row: `short` is empty, nothing is written, and the caller answers as for an unknown pipeline. The order
 * (company, then pipeline) is the cascade's own order.
 */
function lockedPipelineCtes(condition: string): string {
  return `${lockedCompanyCte("$2", condition)}, pipeline_row AS MATERIALIZED (
           SELECT p.id, p.short_id_prefix FROM pipelines p
           WHERE p.id = $3 AND p.company_id = $2 AND EXISTS (SELECT 1 FROM company_row) FOR KEY SHARE
         ), short AS (
           SELECT p.short_id_prefix || '-' || nextval(pipeline_short_id_sequence(p.id)::regclass) AS short_id
           FROM pipeline_row p
         )`;
}

/** The CTEs that insert the item (from `short`), its event and the event's deliveries (`queued`). */
const INSERT_ITEM_CTES = `new_item AS (
       INSERT INTO items (id, company_id, pipeline_id, stage_id, status_id, short_id, name, contact_id, source, metadata,
         version, created_at, updated_at)
       SELECT $1, $2, $3, $4, $5, short.short_id, $6, $7, $8, $9::jsonb, 1, $10::timestamptz, $10::timestamptz FROM short
       RETURNING id, short_id
     ), new_event AS (
       INSERT INTO webhook_events (id, company_id, type, resource_id, payload)
       SELECT $11, $2, $12, new_item.id, ($13 || to_json(new_item.short_id)::text || $14)::json FROM new_item
       RETURNING id, type, seq
     ), ${fanOutCtes("new_event", "$2")}`;

/** An item's updatable columns as they are to be stored (unchanged ones keep the values read). */
export interface ItemColumns {
  name: string;
  stageId: string;
  statusId: string;
  contactId: string | null;
  source: string | null;
  metadata: unknown;
}

/** An outbox event of an item change: its id (uuid v7), name and the exact JSON body to deliver. */
export type ItemChangeEvent = OutboxEventToInsert;

/**
 * Optimistic locking (spec "Items", PATCH with `version`; CONTRACT "Events and deliveries"): stores `columns` on
 * the company's item `itemId` only if its version is still `expectedVersion`, with `version + 1` and
 * `updated_at = updatedAt`, and in the SAME statement writes `events` (in this order, so their `seq` follows it)
 * with one pending delivery per active subscription of the company to each event's name (db/outbox.ts
 * `fanOutCtes`). One atomic statement: no transaction round trips, no row held locked while the
 * app works. Event payloads are stored as given (`JSON.stringify`, key order kept).
 * @returns false (and nothing written) when the item does not have that version any more, or does not exist.
 * @throws the database error when a constraint fails (nothing is written then).
 */
export async function updateItemWithEvents(
  prisma: PrismaClient,
  item: { id: string; companyId: string; expectedVersion: number; updatedAt: Date },
  columns: ItemColumns,
  events: ItemChangeEvent[],
): Promise<boolean> {
  const rows = await query<{ updated: number }>(
    prisma,
    `WITH updated AS (
       UPDATE items SET name = $4, stage_id = $5, status_id = $6, contact_id = $7, source = $8, metadata = $9::jsonb,
         version = version + 1, updated_at = $10::timestamptz
       WHERE id = $1 AND company_id = $2 AND version = $3
       RETURNING id
     ), ${insertEventsCte("new_events", "updated", "$2", 11)}, ${fanOutCtes("new_events", "$2")}
     SELECT (SELECT count(*) FROM updated)::int AS updated, (SELECT count(*) FROM queued)::int AS deliveries`,
    [
      item.id,
      item.companyId,
      item.expectedVersion,
      columns.name,
      columns.stageId,
      columns.statusId,
      columns.contactId,
      columns.source,
      JSON.stringify(columns.metadata ?? {}),
      item.updatedAt,
      ...eventParams(events),
    ],
    { name: "update-item-with-events" },
  );
  return Number(rows[0]?.updated ?? 0) > 0;
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

/**
 * Data access for items (table `items`). Every read is scoped to a company, so another tenant's item reads as
 * unknown (CONTRACT "Errors", 404). Rows come back in the `ItemRecord` shape `toItemResponse` formats.
 */
import { Prisma, type PrismaClient } from "../generated/prisma/client";
import type { KeysetPosition } from "./keyset";
import { ITEM_INCLUDE, type ItemRecord } from "./item-record";
import { findPipelineStructure, refreshPipelineStructure, structureNames, type Db, type PipelineStructure } from "./pipelines";
import type { JsonAroundSlot } from "./json-slot";
import { ACTOR_COLUMNS, actorParam, actorValues, eventOrderLockCte, eventParams, fanOutCtes, insertEventsCte, type OutboxEventToInsert } from "./outbox";
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
import { matchLockIds, pipelineState, type LockedPipeline } from "./upsert-locks";
import { lockedCompanyCte } from "./companies";
import { query, run, type Executor, type TransactionQuery } from "./sql";
import { COUNTED_WORDS, likeLiteral, SEARCH_WINDOW, searchWords, trigramProbe } from "./item-search";

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
 * The item columns of the `items` row aliased `alias`, without joins: pipeline, stage and status names come from the
 * cached pipeline structure (db/pipelines.ts `findPipelineStructure`; structures never change once stored).
 */
function itemColumns(alias: string): string {
  const a = alias;
  return `${a}.id, ${a}.pipeline_id, ${a}.stage_id, ${a}.status_id, ${a}.short_id, ${a}.name, ${a}.contact_id, ${a}.source,
    ${a}.metadata, ${a}.version,
    (extract(epoch FROM ${a}.created_at) * 1000)::float8 AS created_ms, (extract(epoch FROM ${a}.updated_at) * 1000)::float8 AS updated_ms`;
}

/** `SELECT` of the item columns from `items i`. */
const ITEM_SELECT = `SELECT ${itemColumns("i")}
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
    records[i] = toItemRecord(row, structure, stageName, statusName);
  }
  return records;
}

/** One item row as an `ItemRecord`, with its pipeline's structure and its stage's and status's names. */
function toItemRecord(row: ItemRow, structure: PipelineStructure, stageName: string, statusName: string): ItemRecord {
  return {
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

/**
 * Reads the company's item `itemId` locked `FOR UPDATE` inside the transaction of `q` (db/sql.ts
 * `SqlRunner.transaction`), in the ItemRecord shape, names from `structure` (the item's pipeline, read before the
 * transaction: on PGlite no other statement may run while it is open; structures never change once stored).
 * @returns the record, or null when unknown or another company's.
 * @throws Error when the row's stage or status is not in `structure` (another pipeline's structure was passed).
 */
export async function lockItemForUpdate(
  q: TransactionQuery,
  companyId: string,
  itemId: string,
  structure: PipelineStructure,
): Promise<ItemRecord | null> {
  const rows = await q<ItemRow>(`${ITEM_SELECT} WHERE i.id = $1 AND i.company_id = $2 FOR UPDATE`, [itemId, companyId]);
  const row = rows[0];
  if (!row) return null;
  const names = structureNames(structure);
  const stageName = names.get(row.stage_id);
  const statusName = names.get(row.status_id);
  if (row.pipeline_id !== structure.id || stageName === undefined || statusName === undefined) {
    throw new Error(`item ${row.id}: stage ${row.stage_id} or status ${row.status_id} not in pipeline ${structure.id}`);
  }
  return toItemRecord(row, structure, stageName, statusName);
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

/**
 * Inside an open transaction (`q`, db/sql.ts `SqlRunner.transaction`): the company's item `itemId` of the pipeline
 * whose structure is `structure` (read before the transaction: nothing may go through Prisma or the raw runner while
 * it is open), or null when it is unknown, another company's or in another pipeline. Each call reads the latest
 * committed row (READ COMMITTED: a new snapshot per statement).
 * @throws Error when the row's stage or status is not in `structure` (impossible while structures are immutable).
 */
export async function readPipelineItemIn(
  q: TransactionQuery,
  companyId: string,
  itemId: string,
  structure: PipelineStructure,
): Promise<ItemRecord | null> {
  const [row] = await q<ItemRow>(`${ITEM_SELECT} WHERE i.id = $1 AND i.company_id = $2 AND i.pipeline_id = $3`, [itemId, companyId, structure.id]);
  if (!row) return null;
  const names = structureNames(structure);
  const stageName = names.get(row.stage_id);
  const statusName = names.get(row.status_id);
  if (stageName === undefined || statusName === undefined) {
    throw new Error(`item ${row.id}: stage ${row.stage_id} or status ${row.status_id} not in pipeline ${row.pipeline_id}`);
  }
  return toItemRecord(row, structure, stageName, statusName);
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

/** Bound parameters of one statement; `add` appends a value and returns its placeholder (`$n`). */
function boundParams(first: unknown[]): { params: unknown[]; add: (value: unknown) => string } {
  const params = [...first];
  return {
    params,
    add: (value) => {
      params.push(value);
      return `$${params.length}`;
    },
  };
}

/**
 * The WHERE conditions (on `items i`, `$1` being the company id) of every filter of `filter` but `q`, and of the
 * keyset position `after`: only items after it in (created_at desc, id desc) order.
 */
function listConditions(filter: ItemListFilter, after: KeysetPosition | undefined, add: (value: unknown) => string): string[] {
  const where = ["i.company_id = $1"];
  if (filter.pipelineId !== undefined) where.push(`i.pipeline_id = ${add(filter.pipelineId)}`);
  if (filter.stageId !== undefined) where.push(`i.stage_id = ${add(filter.stageId)}`);
  if (filter.statusId !== undefined) where.push(`i.status_id = ${add(filter.statusId)}`);
  if (filter.shortId !== undefined) where.push(`lower(i.short_id) = lower(${add(filter.shortId)}::text)`);
  if (filter.name !== undefined) where.push(`lower(i.name) = lower(${add(filter.name)}::text)`);
  if (filter.createdAfter !== undefined) where.push(`i.created_at > ${add(filter.createdAfter)}::timestamptz`);
  if (filter.updatedAfter !== undefined) where.push(`i.updated_at > ${add(filter.updatedAfter)}::timestamptz`);
  if (after !== undefined) {
    const at = add(after.createdAt);
    const id = add(after.id);
    where.push(`i.created_at <= ${at}::timestamptz`);
    where.push(`(i.created_at < ${at}::timestamptz OR (i.created_at = ${at}::timestamptz AND i.id < ${id}))`);
  }
  return where;
}

/** Which filters of `filter` are present, as a string of 0/1: one prepared statement per combination. */
function filterShape(filter: ItemListFilter): string {
  return [
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
}

/** Tuning of `listItems`, for tests; the defaults are what the API uses. */
export interface ListItemsOptions {
  /** Rows phase 1 of a `q` search reads before it turns to the trigram index (default `SEARCH_WINDOW`). */
  searchWindow?: number;
}

/**
 * One page of the company's items, newest first (`created_at` desc, id desc), with pipeline, stage and status names
 * from the cached pipeline structures. The page position is a keyset condition on (created_at, id); the extra
 * `created_at <= cursor` bound lets PostgreSQL start the index range scan on (company_id, created_at desc, id desc)
 * at the cursor, so a page costs the same at any depth. Each filter has an index that keeps a page's cost
 * independent of the table's size (migration 20261123100001_item_list_filters): pipeline, stage and status scan
 * (x_id, created_at desc, id desc) in list order; `name` scans (company_id, lower(name), created_at desc, id desc);
 * `short_id` looks up (company_id, lower(short_id)); `updated_after` reads the (company_id, updated_at) range, whose
 * matches are then ordered. Without `q` this is one raw SELECT, prepared once per filter combination (db/sql.ts
 * `QueryOptions.name`); every value is a bound parameter.
 *
 * `q` (`filter.search`) runs in two phases (db/item-search.ts, issue 11). Phase 1, one prepared SELECT, reads at
 * most `searchWindow` (500, or `take` if larger) rows of the list order after the cursor with the other filters,
 * keeps the names holding the term and stops as soon as the page is full, so a term in at least ~20% of the rows
 * costs a part of the window at any table size. Only when the window ends without a full page, phase 2 (an
 * unprepared SELECT, planned for its actual probe) reads the pg_trgm GIN index for the rows after the window,
 * probing with the term's words of 3+ letters or digits held by at most 1% of the window's names, or with the whole
 * term when there is none; the whole term is always checked. Statement times at 10k / 1M items (EXPLAIN ANALYZE,
 * PostgreSQL 15, warm cache, bench seeding where every name is "Seeded lead N"; before = the former single LIKE):
 * - common term "lead": phase 1 only, 9 / 10 buffers, 0.4 / 0.35 ms, with a custom or a generic plan alike
 *   (before: the same with a custom plan, but 3.5 s at 1M with the generic one, a bitmap scan of every row and a
 *   sort; PostgreSQL kept custom plans in the runs measured, but nothing bound it to);
 * - rare term, one match 90% deep ("lead 9000" / "lead 900000"): window 0.7 / 0.7 ms (73 / 77 buffers), then the
 *   probe "%9000%" / "%900000%" 0.05 / 0.35 ms (6 / 130 buffers); before 0.55 / 15.9 ms (the whole term's probe
 *   walked the posting lists of "lea", "ead", "ad " end to end: 978 buffers at 1M);
 * - no match ("zzz"): window 0.6 / 0.7 ms, probe 0.03 ms (before 0.2 / 0.15 ms): the window is what a term
 *   matching nothing now pays;
 * - remaining worst case, a term under ~20% of the rows with no rare word of 3+ characters, e.g. "lead 99" (1.1%
 *   of the rows; "lead" is in every name, "99" is too short for a trigram): the whole term's probe, planned by
 *   PostgreSQL, here an ordered scan until the page fills: window 0.6 / 0.7 ms + 0.3 / 3.6 ms (30 / 548 buffers),
 *   before 0.85 / 5.4 ms. Its cost grows with the rows to scan (or with the common words' posting lists and the
 *   matches when PostgreSQL picks the trigram index); see bench/README.md, "Filtered pages".
 * Results are exact either way: the same rows, order and cursors as one `ORDER BY ... LIMIT` over the whole list.
 * @param filter the filters, position and page size (`take` rows).
 * @returns at most `filter.take` items.
 * @throws the driver's error on a database failure; Error when a row's pipeline structure is corrupt
 * (`toItemRecords`).
 */
export async function listItems(prisma: PrismaClient, filter: ItemListFilter, options: ListItemsOptions = {}): Promise<ItemRecord[]> {
  const rows =
    filter.search === undefined
      ? await listRows(prisma, filter, filter.after, filter.take, undefined, `list-items-${filterShape(filter)}`)
      : await searchRows(prisma, filter, filter.search, options.searchWindow ?? SEARCH_WINDOW);
  return toItemRecords(prisma, filter.companyId, rows);
}

/** How phase 2 of a search finds names: a trigram probe pattern and, when the probe is not the whole term, the term. */
interface NameMatch {
  /** LIKE pattern for lower(name), lowered by the database. */
  pattern: string;
  /** The whole term, checked with strpos when `pattern` holds only some of its words. */
  term?: string;
}

/**
 * Up to `take` item rows matching the filters of `filter` (but `q`) and `match`, after `after`, newest first: one
 * SELECT, prepared as `name` when given, else planned for its actual values.
 */
async function listRows(
  prisma: PrismaClient,
  filter: ItemListFilter,
  after: KeysetPosition | undefined,
  take: number,
  match: NameMatch | undefined,
  name: string | undefined,
): Promise<ItemRow[]> {
  const { params, add } = boundParams([filter.companyId]);
  const where = listConditions(filter, after, add);
  if (match) where.push(`lower(i.name) LIKE lower(${add(match.pattern)}::text)`);
  if (match?.term !== undefined) where.push(`strpos(lower(i.name), lower(${add(match.term)}::text)) > 0`);
  const text = `${ITEM_SELECT} WHERE ${where.join(" AND ")} ORDER BY i.created_at DESC, i.id DESC LIMIT ${add(take)}::int`;
  return query<ItemRow>(prisma, text, params, name ? { name } : undefined);
}

/** A phase-1 row: a match (`part` 0) or the window's last row (`part` 1) with the window's word counts. */
interface WindowRow extends ItemRow {
  part: number;
  /** On the last row only: per counted word (`searchWords`), how many names of the window hold it. */
  counts: number[] | null;
}

/**
 * The `q` search of `listItems`: phase 1 over a window of `window` rows, then, when the page is not full and the
 * list goes on past the window, phase 2 (trigram probe) for the rest of the page.
 */
async function searchRows(prisma: PrismaClient, filter: ItemListFilter, term: string, window: number): Promise<ItemRow[]> {
  const { params, add } = boundParams([filter.companyId]);
  const where = listConditions(filter, filter.after, add).join(" AND ");
  const words = searchWords(term);
  const t = add(term);
  const w = add(words.map((word) => word.text));
  const size = add(Math.max(window, filter.take));
  const take = add(filter.take);
  const order = "ORDER BY i.created_at DESC, i.id DESC";
  const counts = Array.from({ length: COUNTED_WORDS }, (_, k) => `count(*) FILTER (WHERE strpos(w.lname, lower((${w}::text[])[${k + 1}])) > 0)`);
  // `hits` reads the window lazily and stops at a full page. Only when it does not fill the page, the second branch
  // runs (a one-time filter): the window's last row (found by an index-only OFFSET, then read by id) and its word
  // counts, a plain aggregate over the window's names.
  const rows = await query<WindowRow>(
    prisma,
    `WITH hits AS MATERIALIZED (
       SELECT w.* FROM (SELECT i.* FROM items i WHERE ${where} ${order} LIMIT ${size}::int) w
       WHERE strpos(lower(w.name), lower(${t}::text)) > 0 LIMIT ${take}::int
     )
     SELECT 0 AS part, ${itemColumns("h")}, NULL::int[] AS counts FROM hits h
     UNION ALL
     SELECT 1, ${itemColumns("e")}, c.counts
     FROM (SELECT i.id FROM items i WHERE ${where} ${order} OFFSET ${size}::int - 1 LIMIT 1) edge
     JOIN items e ON e.id = edge.id
     CROSS JOIN (
       SELECT ARRAY[${counts.join(", ")}]::int[] AS counts
       FROM (SELECT lower(i.name) AS lname FROM items i WHERE ${where} ${order} LIMIT ${size}::int) w
     ) c
     WHERE (SELECT count(*) FROM hits) < ${take}::int
     ORDER BY part, created_ms DESC, id DESC`,
    params,
    { name: `list-items-search-window-${filterShape(filter)}` },
  );
  const hits = rows.filter((r) => Number(r.part) === 0);
  const edge = rows.find((r) => Number(r.part) === 1);
  if (hits.length >= filter.take || !edge) return hits;
  const probe = trigramProbe(words, (edge.counts ?? []).map(Number), Math.max(window, filter.take));
  const match: NameMatch = probe ? { pattern: probe, term } : { pattern: `%${likeLiteral(term)}%` };
  const after = { createdAt: new Date(Number(edge.created_ms)), id: edge.id };
  return [...hits, ...(await listRows(prisma, filter, after, filter.take - hits.length, match, undefined))];
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
 * pipeline is not the company's or is archived, with `companyGone` when the company itself no longer exists (deleted with its keys
 * while the request ran), or with `idempotency` when the key is in use (`inUse`) or has a stored response
 * (`stored`).
 * @throws the database error when a constraint fails (nothing is written then).
 */
export async function insertItemWithEvent(
  prisma: PrismaClient,
  item: ItemToInsert,
  event: ItemEventToInsert,
  idempotency?: { claim: IdempotencyClaim; location: string },
): Promise<{ shortId: string | null; deliveries: number; companyGone?: boolean; inUse?: boolean; stored?: StoredResponse }> {
  const params = insertItemParams(item, event);
  if (!idempotency) return insertItemRun(prisma, params, { name: "insert-item-with-event" });
  const { claim, location } = idempotency;
  params.push(claim.key, claim.requestHash, location, claim.ttlSeconds);
  const rows = await retryOnStoredKeyConflict(prisma, claim, () =>
    query<{ short_id: string | null; deliveries: number; companies: number } & ClaimRow>(
      prisma,
      `WITH ${claimCtes("$2", "$16")}, ${lockedPipelineCtes(CLAIM_TAKEN)}, ${INSERT_ITEM_CTES}, ${storeCreatedCte("new_item", {
        company: "$2",
        key: "$16",
        hash: "$17",
        body: "$13 || to_json(new_item.short_id)::text || $14",
        location: "$18",
        ttl: "$19",
      })}
       SELECT (SELECT short_id FROM new_item) AS short_id, (SELECT count(*) FROM queued)::int AS deliveries,
         (SELECT count(*) FROM company_row)::int AS companies, ${CLAIM_SELECT.columns}
       ${CLAIM_SELECT.from}`,
      params,
      { name: "insert-item-with-event-idempotent" },
    ),
  );
  const row = rows[0]!;
  const claimed = claimResult(row);
  if (claimed) return { shortId: null, deliveries: 0, ...claimed };
  return { shortId: row.short_id ?? null, deliveries: Number(row.deliveries ?? 0), companyGone: Number(row.companies) === 0 };
}

/** The bound parameters `$1`..`$15` of the insert statements (`$15`: the request's actor, db/outbox.ts `actorParam`). */
function insertItemParams(item: ItemToInsert, event: ItemEventToInsert): unknown[] {
  return [
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
    actorParam(),
  ];
}

/** Runs `INSERT_ITEM_SQL` on `db` and reads its outcome as `insertItemWithEvent` returns it. */
async function insertItemRun(
  db: Executor,
  params: unknown[],
  options?: { name: string },
): Promise<{ shortId: string | null; deliveries: number; companyGone: boolean }> {
  const rows = await run<{ short_id: string | null; deliveries: number; companies: number }>(db, INSERT_ITEM_SQL, params, options);
  return { shortId: rows[0]?.short_id ?? null, deliveries: Number(rows[0]?.deliveries ?? 0), companyGone: Number(rows[0]?.companies) === 0 };
}

/**
 * The CTEs that lock the company's row, then the pipeline's (`FOR KEY SHARE`, the lock the items' foreign keys take
 * anyway, shared by concurrent creates), and only then take the next short-id number (`short`), when `condition`
 * (SQL) holds. Why: an operator may delete the pipeline, or the company with everything in it, while creates are in
 * flight. Without the locks, a create could resolve the pipeline's sequence just before the delete dropped it
 * (`could not open relation with OID`) or lock the rows in the opposite order to the cascade (`deadlock detected`).
 * With them, the delete waits for the creates that got there first, and a create that comes after the delete finds
 * no row: `short` is empty, nothing is written, and the caller answers as for an unknown pipeline. The order
 * (company, then pipeline) is the cascade's own order. An archived pipeline (`archived_at` set) is not taken either,
 * so no item is created in it (CONTRACT "Pipelines, blueprints, transitions"); the caller tells the two apart.
 */
function lockedPipelineCtes(condition: string): string {
  return `${lockedCompanyCte("$2", condition)}, pipeline_row AS MATERIALIZED (
           SELECT p.id, p.short_id_prefix FROM pipelines p
           WHERE p.id = $3 AND p.company_id = $2 AND p.archived_at IS NULL AND EXISTS (SELECT 1 FROM company_row) FOR KEY SHARE
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
     ), ${eventOrderLockCte("new_event_order", "$2")}, new_event AS (
       INSERT INTO webhook_events (id, company_id, type, resource_id, payload, ${ACTOR_COLUMNS})
       SELECT $11, $2, $12, new_item.id, ($13 || to_json(new_item.short_id)::text || $14)::json, ${actorValues("$15::text")}
       FROM new_item CROSS JOIN new_event_order
       RETURNING id, type, seq, payload
     ), ${fanOutCtes("new_event", "$2")}`;

/** The insert statement without an idempotency key (parameters: `insertItemParams`). */
const INSERT_ITEM_SQL = `WITH ${lockedPipelineCtes("true")}, ${INSERT_ITEM_CTES}
       SELECT (SELECT short_id FROM new_item) AS short_id, (SELECT count(*) FROM queued)::int AS deliveries,
         (SELECT count(*) FROM company_row)::int AS companies`;

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
 * app works. Event payloads are stored as given (`JSON.stringify`, key order kept). `db` is a client, or an open
 * transaction (the upsert's, services/item-upsert.ts).
 * The company row is locked first (`lockedCompanyCte`), in the order of `DELETE FROM companies`' cascade, so an
 * update racing its company's deletion cannot deadlock with it.
 * @returns `updated` false (and nothing written) when the item does not have that version any more, or does not
 * exist; `companyGone` when the company itself no longer exists (deleted with its keys while the request ran).
 * @throws the database error when a constraint fails (nothing is written then).
 */
export async function updateItemWithEvents(
  db: Executor,
  item: { id: string; companyId: string; expectedVersion: number; updatedAt: Date },
  columns: ItemColumns,
  events: ItemChangeEvent[],
): Promise<{ updated: boolean; companyGone: boolean }> {
  const rows = await run<{ updated: number; companies: number }>(
    db,
    `WITH ${lockedCompanyCte("$2")}, updated AS (
       UPDATE items SET name = $4, stage_id = $5, status_id = $6, contact_id = $7, source = $8, metadata = $9::jsonb,
         version = version + 1, updated_at = $10::timestamptz
       WHERE id = $1 AND company_id = $2 AND version = $3 AND EXISTS (SELECT 1 FROM company_row)
       RETURNING id
     ), ${insertEventsCte("new_events", "updated", "$2", 11)}, ${fanOutCtes("new_events", "$2")}
     SELECT (SELECT count(*) FROM updated)::int AS updated, (SELECT count(*) FROM queued)::int AS deliveries,
       (SELECT count(*) FROM company_row)::int AS companies`,
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
  return { updated: Number(rows[0]?.updated ?? 0) > 0, companyGone: Number(rows[0]?.companies) === 0 };
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
 * compared as JSON values. Field keys and values are bound parameters, never spliced into the SQL. A custom-field
 * condition also tests containment in `stageline_match_metadata(metadata)` (the metadata normalized the same way),
 * which the GIN index items_match_metadata_idx answers: the cost follows the matches, not the pipeline's size.
 */
function duplicateCondition(criterion: DuplicateCriterion): Prisma.Sql {
  const normalize = (expr: Prisma.Sql) => Prisma.sql`lower(btrim(${expr}, ${TRIM_CHARACTERS}))`;
  const input = (value: string) => normalize(Prisma.sql`${value}::text`);
  if (criterion.kind === "column") {
    return Prisma.sql`${normalize(DUPLICATE_COLUMNS[criterion.field])} = ${input(criterion.value)}`;
  }
  // The containment test is answered by the GIN index items_match_metadata_idx (migration
  // 20261126300001_item_match_index), so a search reads the matching items only; the exact comparison follows.
  if (typeof criterion.value === "string") {
    return Prisma.sql`(${indexedCondition(criterion)} AND jsonb_typeof(i.metadata -> ${criterion.field}::text) = 'string' AND ${normalize(
      Prisma.sql`i.metadata ->> ${criterion.field}::text`,
    )} = ${input(criterion.value)})`;
  }
  const json = JSON.stringify(criterion.value);
  return Prisma.sql`(${indexedCondition(criterion)} AND i.metadata -> ${criterion.field}::text = ${json}::jsonb)`;
}

/**
 * The containment test of a custom-field criterion (`stageline_match_metadata(i.metadata) @> {field: value}`, the
 * value normalized as `duplicateCondition` compares it), which the GIN index items_match_metadata_idx answers.
 */
function indexedCondition(criterion: Extract<DuplicateCriterion, { kind: "metadata" }>): Prisma.Sql {
  const value =
    typeof criterion.value === "string"
      ? Prisma.sql`lower(btrim(${criterion.value}::text, ${TRIM_CHARACTERS}))`
      : Prisma.sql`${JSON.stringify(criterion.value)}::jsonb`;
  return Prisma.sql`stageline_match_metadata(i.metadata) @> jsonb_build_object(${criterion.field}::text, ${value})`;
}

/**
 * The items a duplicate search can match at all, read through the GIN index alone when its criteria allow (match
 * "all" with at least one custom field; match "any" with custom fields only): a subquery behind an `OFFSET 0` fence
 * whose only condition is the containment tests, so the company and pipeline conditions cannot be pushed into it.
 * Without the fence, PostgreSQL chose from the statistics: while a pipeline grows fast (an import), they lag behind
 * and it scanned every item of the pipeline through the company and pipeline indexes, computing
 * `stageline_match_metadata` per row (12 ms at 3,000 items, growing with them, where the GIN index reads the few
 * items holding the value). Otherwise (a built-in column in a match "any") the items table itself.
 */
function candidatesSql(search: DuplicateSearch): Prisma.Sql {
  const metadata = search.criteria.filter((c): c is Extract<DuplicateCriterion, { kind: "metadata" }> => c.kind === "metadata");
  const indexable = search.match === "all" ? metadata.length > 0 : metadata.length === search.criteria.length;
  if (!indexable) return Prisma.sql`items i`;
  const tests = Prisma.join(metadata.map(indexedCondition), search.match === "all" ? " AND " : " OR ");
  return Prisma.sql`(SELECT * FROM items i WHERE ${tests} OFFSET 0) i`;
}

/** A duplicate-search hit: the item id and the fields that matched, in criteria order. */
export interface DuplicateHit {
  id: string;
  matchedOn: string[];
}

/**
 * Items of one pipeline of the company that match the criteria: with `match: "any"` at least one criterion holds,
 * with `"all"` every one does. Best match first (most matched fields, then newest), at most `limit`.
 * Done in one parameterized SQL query (`$queryRaw`), or, given an open transaction's `TransactionQuery` (the
 * upsert's, under its match locks: services/item-upsert.ts), the same statement through it.
 */
export async function findDuplicateHits(db: Db | TransactionQuery, search: DuplicateSearch): Promise<DuplicateHit[]> {
  if (search.criteria.length === 0) return [];
  const statement = duplicateHitsSql(search);
  const rows =
    typeof db === "function"
      ? await db<{ id: string; matched_on: string[] }>(statement.text, statement.values)
      : await db.$queryRaw<{ id: string; matched_on: string[] }[]>(statement);
  return rows.map((r) => ({ id: r.id, matchedOn: r.matched_on }));
}

/** What `findDuplicateHits` searches: the company's pipeline, the criteria, how they combine, at most `limit` hits. */
export interface DuplicateSearch {
  companyId: string;
  pipelineId: string;
  criteria: DuplicateCriterion[];
  match: "any" | "all";
  limit: number;
}

/** The statement of `findDuplicateHits`: rows `id`, `matched_on`, `created_at`, best match first. */
function duplicateHitsSql(search: DuplicateSearch): Prisma.Sql {
  const conditions = search.criteria.map(duplicateCondition);
  const matched = Prisma.join(
    search.criteria.map((c, i) => Prisma.sql`CASE WHEN ${conditions[i]!} THEN ${c.field}::text END`),
  );
  const filter = Prisma.join(conditions, search.match === "all" ? " AND " : " OR ");
  return Prisma.sql`
    SELECT m.id, m.matched_on, m.created_at FROM (
      SELECT i.id, i.created_at, array_remove(ARRAY[${matched}], NULL) AS matched_on
      FROM ${candidatesSql(search)}
      WHERE i.company_id = ${search.companyId} AND i.pipeline_id = ${search.pipelineId} AND (${filter})
    ) m
    ORDER BY cardinality(m.matched_on) DESC, m.created_at DESC, m.id DESC
    LIMIT ${search.limit}::int`;
}

/** The text of `insertItemUnlessMatchLocked`'s statement (the same for every call: built once). */
let upsertInsertText: string | undefined;

/** `insertItemUnlessMatchLocked`'s statement: the lock-id CTEs `lockCtes`, the match text and its values at `$<first>`, `$<first + 1>`. */
function upsertInsertSql(lockCtes: string, first: number): string {
  return `WITH ${lockCtes}, hits AS MATERIALIZED (
       SELECT h.id, h.matched_on, row_number() OVER (ORDER BY cardinality(h.matched_on) DESC, h.created_at DESC, h.id DESC) AS ord
       FROM stageline_locked_match((SELECT coalesce(array_agg(id), '{}') FROM ids), $${first}::text, $${first + 1}::text[]) h
     ), ${lockedPipelineCtes("NOT EXISTS (SELECT 1 FROM hits)")}, ${INSERT_ITEM_CTES}
     SELECT (SELECT short_id FROM new_item) AS short_id, (SELECT count(*) FROM queued)::int AS deliveries,
       (SELECT count(*) FROM company_row)::int AS companies,
       (SELECT p.archived_at IS NOT NULL FROM pipelines p WHERE p.id = $3 AND p.company_id = $2) AS archived,
       (SELECT json_agg(json_build_object('id', id, 'matched_on', matched_on) ORDER BY ord) FROM hits) AS hits`;
}

/** What `insertItemUnlessMatchLocked` found: the matches (nothing written), or the insert's outcome. */
export type LockedMatchOutcome = { pipeline: LockedPipeline } & (
  | { hits: DuplicateHit[] }
  | { hits?: undefined; shortId: string | null; deliveries: number; companyGone: boolean }
);

/**
 * The upsert's match-or-create (services/item-upsert.ts; CONTRACT "Upsert") in ONE statement on `db`: takes the
 * match locks of `search` (db/upsert-locks.ts `matchLockIds`, held until `db`'s transaction ends: the statement's
 * own when `db` is a client), runs the match query of `findDuplicateHits` with a snapshot taken after the locks were
 * granted (the VOLATILE function `stageline_locked_match`, migration 20261127500000_upsert_locked_match, says why
 * that needs a function), and only when it finds nothing, inserts as `insertItemWithEvent` without a key does (no
 * short-id number is taken otherwise). Outside a transaction this is the whole create path of an upsert: one
 * autocommitted statement, as a create is, and concurrent upserts of one key still make exactly one item.
 * @returns `pipeline`, the state of the company's pipeline (read with the statement's snapshot); and `hits` (best
 * match first) when something matched, and nothing was written; else as `insertItemWithEvent` without a key:
 * `shortId` null when the pipeline is not the company's or is archived, `companyGone` when the company no longer
 * exists.
 * @throws the driver's error.
 */
export async function insertItemUnlessMatchLocked(
  db: Executor,
  item: ItemToInsert,
  event: ItemEventToInsert,
  search: DuplicateSearch,
): Promise<LockedMatchOutcome> {
  const params = insertItemParams(item, event);
  const lock = matchLockIds(search.companyId, search.pipelineId, search.match, search.criteria, params.length + 1);
  const hits = duplicateHitsSql(search);
  // Inside the function the match statement reads its bound values as $1[n] of one text array.
  const matchText = hits.text.replace(/\$(\d+)/g, (_m, n: string) => `$1[${n}]`);
  const matchArgs = hits.values.map((v) => (typeof v === "string" ? v : JSON.stringify(v)));
  const [row] = await run<{
    short_id: string | null;
    deliveries: number;
    companies: number;
    archived: boolean | null;
    hits: { id: string; matched_on: string[] }[] | null;
  }>(
    db,
    (upsertInsertText ??= upsertInsertSql(lock.ctes, params.length + lock.values.length + 1)),
    [...params, ...lock.values, matchText, matchArgs],
    // The statement's text depends only on the insert's and the lock's shapes, never on the criteria: one prepared
    // statement per connection.
    { name: "upsert-insert-unless-match" },
  );
  const pipeline = pipelineState(row?.archived);
  const found = row?.hits ?? [];
  if (found.length > 0) return { pipeline, hits: found.map((h) => ({ id: h.id, matchedOn: h.matched_on })) };
  return { pipeline, shortId: row?.short_id ?? null, deliveries: Number(row?.deliveries ?? 0), companyGone: Number(row?.companies) === 0 };
}

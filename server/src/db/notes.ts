/**
 * Data access for notes (table `notes`; CONTRACT "Notes"). Every read and write is scoped to one company, so a note
 * of another company is indistinguishable from a missing one (CONTRACT "Errors": 404 never reveals other tenants'
 * ids), and a note's item is always an item of the note's company.
 *
 * Creates and updates are ONE raw statement each, as for tasks (db/tasks.ts): the note, its outbox events and their
 * deliveries (db/outbox.ts), the `item_id` reference check and, for a create with an idempotency claim, the stored
 * response (db/idempotency.ts) commit together. Each statement first locks the company row, then the note's item,
 * both `FOR KEY SHARE`, so a concurrent company or item deletion either waits or has already happened (nothing is
 * written then, and the outcome says why). Deleting a note is one transaction (`deleteNoteAndErase`) that also
 * erases every stored copy of its body (CONTRACT "Item deletion and erasure", applied to notes).
 */
import type { Note, Prisma, PrismaClient } from "../generated/prisma/client";
import { lockedCompanyCte } from "./companies";
import { eraseEventsOf, eraseUndeliveredDeletionEvents, lockQueuesOfPendingDeliveries, type ErasureScope } from "./event-erasure";
import {
  CLAIM_SELECT,
  CLAIM_TAKEN,
  claimCtes,
  claimResult,
  retryOnStoredKeyConflict,
  storeCreatedCte,
  type ClaimRow,
  type IdempotencyClaim,
} from "./idempotency";
import { KEYSET_ORDER, keysetWhere, type KeysetPosition } from "./keyset";
import type { NoteRecord } from "./note-record";
import { ACTOR_COLUMNS, actorValues, eventOrderLockCte, eventParams, fanOutCtes, insertEventsCte, type OutboxEventToInsert } from "./outbox";
import type { RowWriteOutcome } from "./write-outcome";
import { query, sqlOf, type TransactionQuery } from "./sql";
import { noWait, runGrouped, type GroupedStatement } from "./write-groups";

/** Filters of the notes list (CONTRACT "Notes", "Lists"); absent fields do not filter. */
export interface NoteFilters {
  itemId?: string;
  pinned?: boolean;
  /** Only notes updated strictly after this time. */
  updatedAfter?: Date;
}

/** A note row as the raw reads select it; times in milliseconds since the epoch (float8). */
interface NoteRow {
  id: string;
  item_id: string;
  body: string;
  pinned: boolean;
  created_by: string;
  created_ms: number;
  updated_ms: number;
  version: number;
}

const ms = (column: string) => `(extract(epoch FROM ${column}) * 1000)::float8`;

/** The note columns of `notes n` as `NoteRow` reads them. */
const NOTE_COLUMNS = `n.id, n.item_id, n.body, n.pinned, n.created_by, ${ms("n.created_at")} AS created_ms,
       ${ms("n.updated_at")} AS updated_ms, n.version`;

/** A note row as a `NoteRecord`. */
function noteOf(row: NoteRow): NoteRecord {
  return {
    id: row.id,
    itemId: row.item_id,
    body: row.body,
    pinned: row.pinned,
    createdBy: row.created_by,
    createdAt: new Date(Number(row.created_ms)),
    updatedAt: new Date(Number(row.updated_ms)),
    version: Number(row.version),
  };
}

/**
 * The company `companyId` (is it still there?) and its note `id`, in one raw SELECT.
 * @returns `company` false when the company does not exist (any more); `note` null when the note does not exist in
 * the company.
 */
export async function readNote(prisma: PrismaClient, companyId: string, id: string): Promise<{ company: boolean; note: NoteRecord | null }> {
  const rows = await query<{ company: string } & { [K in keyof NoteRow]: NoteRow[K] | null }>(
    prisma,
    `SELECT c.id AS company, ${NOTE_COLUMNS}
     FROM companies c LEFT JOIN notes n ON n.id = $1 AND n.company_id = c.id
     WHERE c.id = $2`,
    [id, companyId],
    { name: "read-note" },
  );
  const row = rows[0];
  if (!row) return { company: false, note: null };
  if (row.id === null) return { company: true, note: null };
  return { company: true, note: noteOf(row as NoteRow) };
}

/**
 * One page of a company's notes, newest first (created_at desc, id desc), strictly after `after`, filtered by
 * `filters`. With `itemId` the scan walks that item's index (item_id, created_at desc, id desc), so its cost does
 * not grow with the company's other notes. Fetches `take` rows; callers pass `limit + 1` to learn whether a next
 * page exists.
 */
export function listNotes(db: PrismaClient | Prisma.TransactionClient, companyId: string, filters: NoteFilters, after: KeysetPosition | undefined, take: number): Promise<Note[]> {
  const where: Prisma.NoteWhereInput = { companyId };
  if (filters.itemId !== undefined) where.itemId = filters.itemId;
  if (filters.pinned !== undefined) where.pinned = filters.pinned;
  if (filters.updatedAfter !== undefined) where.updatedAt = { gt: filters.updatedAfter };
  return db.note.findMany({ where: { AND: [where, keysetWhere(after)] }, orderBy: KEYSET_ORDER, take });
}

/** Why a note write stored nothing (see `insertNoteWithEvents`, `updateNoteWithEvents`). */
export type NoteWriteOutcome = RowWriteOutcome;

/** The CTEs of a note create after `company_row`: item check (`item_row`), insert (`new_note`), events, deliveries. */
const INSERT_NOTE_CTES = `item_row AS MATERIALIZED (
           SELECT i.id FROM items i
           WHERE i.id = $3::text AND i.company_id = $2 AND EXISTS (SELECT 1 FROM company_row) FOR KEY SHARE
         ), new_note AS (
           INSERT INTO notes (id, company_id, item_id, body, pinned, created_by, created_at, updated_at, version)
           SELECT $1, $2, $3, $4, $5::boolean, $6, $7::timestamptz, $7::timestamptz, 1
           WHERE EXISTS (SELECT 1 FROM company_row) AND EXISTS (SELECT 1 FROM item_row)
           RETURNING id
         ), ${insertEventsCte("new_events", "new_note", "$2", 8)}, ${fanOutCtes("new_events", "$2")}`;

/** The outcome columns of a note create. */
const CREATE_OUTCOME_COLUMNS = `(SELECT count(*) FROM company_row)::int AS company, (SELECT count(*) FROM item_row)::int AS item,
       (SELECT count(*) FROM new_note)::int AS created`;

/** The outcome of a create statement's row. */
function createOutcome(row: { company: number; item: number; created: number }): NoteWriteOutcome {
  if (Number(row.created) > 0) return { written: true };
  if (Number(row.company) === 0) return { written: false, reason: "no_company" };
  return { written: false, reason: "no_item" };
}

/**
 * The note creates of one group (db/write-groups.ts) in ONE statement: the company row, then every member's item
 * (`FOR KEY SHARE NOWAIT`, in id order: a locked row fails the group and its members run alone), the notes that
 * still have their item, the company's event-order lock, their events in member order (so their `seq` follows it)
 * and the events' deliveries. Parameters: `$1` the company, `$2`..`$7`
 * the members' note ids, item ids, bodies, pinned flags, authors and times (arrays in member order), `$8`..`$12` every
 * member's events (note id, event id, name, JSON body, actor; arrays in member order). One outcome row per member (`n` from
 * 1, in member order), with the columns of a lone create's outcome.
 */
const INSERT_NOTES_GROUP_SQL = noWait(`WITH ${lockedCompanyCte("$1")}, m AS MATERIALIZED (
           SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::boolean[], $6::text[], $7::timestamptz[])
             WITH ORDINALITY AS m(id, item_id, body, pinned, created_by, created_at, n)
         ), item_row AS MATERIALIZED (
           SELECT i.id FROM items i
           WHERE i.id = ANY ($3::text[]) AND i.company_id = $1 AND EXISTS (SELECT 1 FROM company_row)
           ORDER BY i.id FOR KEY SHARE
         ), new_note AS (
           INSERT INTO notes (id, company_id, item_id, body, pinned, created_by, created_at, updated_at, version)
           SELECT m.id, $1, m.item_id, m.body, m.pinned, m.created_by, m.created_at, m.created_at, 1 FROM m
           WHERE EXISTS (SELECT 1 FROM company_row) AND m.item_id IN (SELECT id FROM item_row)
           ORDER BY m.n
           RETURNING id
         ), ${eventOrderLockCte("new_events_order", "$1")}, new_events AS (
           INSERT INTO webhook_events (id, company_id, type, resource_id, payload, ${ACTOR_COLUMNS})
           SELECT e.id, $1, e.type, new_note.id, e.payload::json, ${actorValues("e.actor")}
           FROM unnest($8::text[], $9::text[], $10::text[], $11::text[], $12::text[]) WITH ORDINALITY AS e(note_id, id, type, payload, actor, n)
             JOIN new_note ON new_note.id = e.note_id CROSS JOIN new_events_order
           ORDER BY e.n
           RETURNING id, type, seq, payload
         ), ${fanOutCtes("new_events", "$1")}
       SELECT m.n::int AS n, (SELECT count(*) FROM company_row)::int AS company,
         (m.item_id IN (SELECT id FROM item_row))::int AS item, (m.id IN (SELECT id FROM new_note))::int AS created
       FROM m ORDER BY m.n`);

/** The parameters of `INSERT_NOTES_GROUP_SQL` from the members' parameters of the lone create (`insertNoteWithEvents`). */
function groupParams(companyId: string, members: readonly (readonly unknown[])[]): unknown[] {
  const column = (i: number) => members.map((p) => p[i]);
  const events = members.flatMap((p) =>
    (p[7] as string[]).map((id, k) => [p[0], id, (p[8] as string[])[k], (p[9] as string[])[k], (p[10] as (string | null)[])[k]]),
  );
  return [companyId, column(0), column(2), column(3), column(4), column(5), column(6), ...[0, 1, 2, 3, 4].map((k) => events.map((e) => e[k]))];
}

/**
 * The note create without an idempotency key, grouped with the company's concurrent ones (db/write-groups.ts): alone,
 * its statement locks the company row, then the note's item (`$3`) `FOR KEY SHARE`, then the event-order lock; a
 * group runs `INSERT_NOTES_GROUP_SQL`, one round trip for all its members.
 */
const INSERT_NOTE_SQL = `WITH ${lockedCompanyCte("$2")}, ${INSERT_NOTE_CTES} SELECT ${CREATE_OUTCOME_COLUMNS}`;
const INSERT_NOTE: GroupedStatement = {
  name: "insert-note-with-events",
  text: INSERT_NOTE_SQL,
  laneText: noWait(INSERT_NOTE_SQL),
  runGroup: async (q, companyId, members) => {
    const rows = await q<{ n: number }>(INSERT_NOTES_GROUP_SQL, groupParams(companyId, members), { name: "insert-notes-group-nowait" });
    return rows.map((row) => [row]);
  },
};

/**
 * Inserts the note `note` (version 1; `created_at` = `updated_at` = `note.createdAt`) of company `companyId` with
 * its outbox `events` (in this order) and one pending delivery per subscription whose filter each passes, in ONE
 * statement, after locking the company row and the item `note.itemId` `FOR KEY SHARE`; nothing is written when
 * either is missing. With `idempotency` (CONTRACT "Idempotency") the same statement takes the key's advisory lock
 * without waiting, reads its stored response and, only when the lock is taken and nothing is stored, writes and
 * stores the 201 response `body` with `location` (as tasks do).
 * @returns `written` true, or why nothing was written: `no_company`, `no_item`, `in_use`, `stored`.
 */
export async function insertNoteWithEvents(
  prisma: PrismaClient,
  companyId: string,
  note: NoteRecord,
  events: OutboxEventToInsert[],
  idempotency?: { claim: IdempotencyClaim; body: string; location: string },
): Promise<NoteWriteOutcome> {
  const params: unknown[] = [note.id, companyId, note.itemId, note.body, note.pinned, note.createdBy, note.createdAt.toISOString(), ...eventParams(events)];
  type Row = { company: number; item: number; created: number };
  if (!idempotency) return createOutcome((await runGrouped<Row>(prisma, INSERT_NOTE, companyId, params))[0]!);
  const { claim, body, location } = idempotency;
  params.push(claim.key, claim.requestHash, body, location, claim.ttlSeconds);
  const rows = await retryOnStoredKeyConflict(prisma, claim, () =>
    query<Row & ClaimRow>(
      prisma,
      `WITH ${claimCtes("$2", "$12")}, ${lockedCompanyCte("$2", CLAIM_TAKEN)}, ${INSERT_NOTE_CTES}, ${storeCreatedCte("new_note", {
        company: "$2",
        key: "$12",
        hash: "$13",
        body: "$14",
        location: "$15",
        ttl: "$16",
      })}
       SELECT ${CREATE_OUTCOME_COLUMNS}, ${CLAIM_SELECT.columns}
       ${CLAIM_SELECT.from}`,
      params,
      { name: "insert-note-with-events-idempotent" },
    ),
  );
  const row = rows[0]!;
  const claimed = claimResult(row);
  if (claimed) return "inUse" in claimed ? { written: false, reason: "in_use" } : { written: false, reason: "stored", stored: claimed.stored };
  return createOutcome(row);
}

/**
 * Stores `next.body`, `next.pinned`, `next.updatedAt` and `next.version` on the company's note `next.id` only if it
 * is still at version `readVersion`, and in the SAME statement writes `events` (in this order) with their
 * deliveries, after locking the company row `FOR KEY SHARE`.
 * @returns `written` true, or why nothing was written: `no_company`, or `changed` (read the note again).
 */
export async function updateNoteWithEvents(
  prisma: PrismaClient,
  companyId: string,
  readVersion: number,
  next: NoteRecord,
  events: OutboxEventToInsert[],
): Promise<NoteWriteOutcome> {
  const rows = await query<{ company: number; updated: number }>(
    prisma,
    `WITH ${lockedCompanyCte("$2")}, updated AS (
       UPDATE notes SET body = $3, pinned = $4::boolean, updated_at = $5::timestamptz, version = $6::int
       WHERE id = $1 AND company_id = $2 AND version = $7::int AND EXISTS (SELECT 1 FROM company_row)
       RETURNING id
     ), ${insertEventsCte("new_events", "updated", "$2", 8)}, ${fanOutCtes("new_events", "$2")}
     SELECT (SELECT count(*) FROM company_row)::int AS company, (SELECT count(*) FROM updated)::int AS updated`,
    [next.id, companyId, next.body, next.pinned, next.updatedAt.toISOString(), next.version, readVersion, ...eventParams(events)],
    { name: "update-note-with-events" },
  );
  const row = rows[0]!;
  if (Number(row.updated) > 0) return { written: true };
  return { written: false, reason: Number(row.company) === 0 ? "no_company" : "changed" };
}

/** What `deleteNoteAndErase` needs besides the note's id. */
export interface NoteDeletion {
  companyId: string;
  noteId: string;
  /** The version the client expects (optimistic locking), or undefined for none. */
  expectedVersion: number | undefined;
  deletedAt: Date;
  /** `location` of the stored Idempotency-Key response that created the note (`/v1/ext/notes/{id}`). */
  location: string;
  /** JSON text stored in place of that response (status 410). */
  erasedReplay: string;
  /** `last_error` of the note's earlier deliveries that were still pending (they end as failed). */
  endedReason: string;
  /** Builds the `note.deleted` event from the locked note. Runs inside the transaction: CPU only. */
  event(note: NoteRecord): OutboxEventToInsert;
}

/** What a note deletion did. */
export type NoteDeletionOutcome =
  | { deleted: true; note: NoteRecord; deliveries: number }
  | { deleted: false; reason: "no_company" | "not_found" }
  | { deleted: false; reason: "version_conflict"; currentVersion: number };

/**
 * Deletes the company's note and erases its body, in ONE transaction (READ COMMITTED): locks the company row
 * (`FOR KEY SHARE`) and the note `FOR UPDATE`, checks `expectedVersion`, builds `note.deleted` from the locked row,
 * erases the note's earlier events (`note.*` with its id as `resource_id`: body → `{ note_id, item_id, erased: true }`,
 * pending deliveries ended as failed, response excerpts cleared; db/event-erasure.ts), replaces its stored create
 * response (found by `location`) with `erasedReplay` (410), deletes the row and writes `note.deleted` with one
 * delivery per subscriber whose filter it passes. A `note.deleted` no subscription receives is erased at once; else
 * when its last delivery ends (db/event-erasure.ts).
 * @returns `deleted` with the locked note and the deliveries queued; else why nothing was written.
 */
export function deleteNoteAndErase(prisma: PrismaClient, deletion: NoteDeletion): Promise<NoteDeletionOutcome> {
  return sqlOf(prisma).transaction(async (q): Promise<NoteDeletionOutcome> => {
    const company = await q<{ id: string }>(`SELECT id FROM companies WHERE id = $1 FOR KEY SHARE`, [deletion.companyId]);
    if (company.length === 0) return { deleted: false, reason: "no_company" };
    const rows = await q<NoteRow>(`SELECT ${NOTE_COLUMNS} FROM notes n WHERE n.id = $1 AND n.company_id = $2 FOR UPDATE`, [
      deletion.noteId,
      deletion.companyId,
    ]);
    if (!rows[0]) return { deleted: false, reason: "not_found" };
    const note = noteOf(rows[0]);
    if (deletion.expectedVersion !== undefined && deletion.expectedVersion !== note.version) {
      return { deleted: false, reason: "version_conflict", currentVersion: note.version };
    }
    const event = deletion.event(note);
    const scope: ErasureScope = { companyId: deletion.companyId, resourceIds: [note.id], typePrefix: "note." };
    await lockQueuesOfPendingDeliveries(q, scope);
    await eraseEventsOf(q, scope, deletion.deletedAt, deletion.endedReason);
    await eraseStoredNoteResponses(q, deletion.companyId, [deletion.location], deletion.erasedReplay);
    const written = await q<{ deliveries: number }>(
      `WITH gone AS (
         DELETE FROM notes WHERE id = $1 AND company_id = $2 RETURNING id
       ), ${insertEventsCte("new_events", "gone", "$2", 3)}, ${fanOutCtes("new_events", "$2")}
       SELECT (SELECT count(*) FROM queued)::int AS deliveries`,
      [note.id, deletion.companyId, ...eventParams([event])],
    );
    await eraseUndeliveredDeletionEvents(q, deletion.companyId, [event.id], deletion.deletedAt);
    return { deleted: true, note, deliveries: Number(written[0]?.deliveries ?? 0) };
  });
}

/**
 * Replaces the company's stored Idempotency-Key responses whose `location` is one of `locations` (the creates of
 * deleted notes) with `erasedReplay` (status 410), inside the caller's transaction.
 */
export async function eraseStoredNoteResponses(q: TransactionQuery, companyId: string, locations: string[], erasedReplay: string): Promise<void> {
  if (locations.length === 0) return;
  await q(
    `UPDATE idempotency_keys SET status = 410, response_body = $3, location = NULL, response_headers = NULL, item_id = NULL
     WHERE company_id = $1 AND location = ANY ($2::text[])`,
    [companyId, locations, erasedReplay],
  );
}

/**
 * The ids of the company's notes on item `itemId`, locked `FOR UPDATE` (in id order) inside the transaction of `q`
 * (db/item-delete.ts: deleting an item deletes and erases its notes).
 */
export async function lockNotesOfItem(q: TransactionQuery, companyId: string, itemId: string): Promise<string[]> {
  const rows = await q<{ id: string }>(`SELECT id FROM notes WHERE company_id = $1 AND item_id = $2 ORDER BY id FOR UPDATE`, [companyId, itemId]);
  return rows.map((r) => r.id);
}

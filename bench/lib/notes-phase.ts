/**
 * Issue 30, `notes` phase (CONTRACT "Notes"):
 * - create: `POST /v1/ext/notes` (auth, rate limit, validation, the item locked against deletion, the note and its
 *   `note.created` outbox event in one statement) against the bare baseline's `POST /notes` (lib/baseline-server.ts:
 *   one INSERT ... SELECT from the company's item, no auth, no outbox), alternating rounds; the ratio sits beside
 *   item create's (item 2) and the issue asks for no worse;
 * - list: `GET /v1/ext/notes?item_id=` (one item's 50 notes, newest first) with a small and a large number of notes
 *   in the company (bulk SQL, `generate_series`, as the items are seeded; PostgreSQL only, where the bench has SQL
 *   access while the server runs): the page cost at the large size within 1.3x of the small one (the item's own index,
 *   notes (item_id, created_at desc, id desc), keeps it flat). Sizes: 10k and 1M notes; --quick 1k and 10k.
 */
import { ratio, rps, sizeLabel } from "./format";
import type { Sql } from "./db";
import type { LoadOptions, LoadResult } from "./load";
import { combineRounds } from "./load";
import type { Figure } from "./report";

/** Figure group: item create's (2) for the create ratio, page costs' (4) for the list. */
const CREATE_ITEM = 2;
const LIST_ITEM = 4;
/** Notes of the measured item, at every size. */
const ITEM_NOTES = 50;
/** The list at the large size may cost at most this multiple of the small size. */
const TARGET_RATIO = 1.3;

/** What the phase uses of the bench pass (lib/pass.ts). */
export interface NotesHost {
  quick: boolean;
  rounds: number;
  serverUrl: string;
  baselineUrl: string;
  headers: Record<string, string>;
  companyId: string;
  /** A seeded item of the demo company (present in the baseline's PGlite copy too). */
  itemId: string;
  /** Direct SQL (PostgreSQL pass only). */
  sql?: Sql;
  load(label: string, options: Omit<LoadOptions, "connections" | "duration">, warm?: boolean): Promise<LoadResult>;
  latencyText(r: LoadResult): string;
  roundsTable(name: string, bare: LoadResult[], server: LoadResult[], note: string): void;
  figures: Figure[];
  notes: string[];
  log(line: string): void;
}

/** The note counts of the company at which one item's notes are listed, ascending. */
export function noteSizes(quick: boolean): [number, number] {
  return quick ? [1_000, 10_000] : [10_000, 1_000_000];
}

/** Runs the phase and pushes its figures. */
export async function runNotesPhase(h: NotesHost): Promise<void> {
  await measureCreate(h);
  if (!h.sql) {
    h.notes.push("Notes list at two sizes: PostgreSQL only (the bench seeds notes with SQL while the server runs).");
    return;
  }
  await measureItemList(h, h.sql);
}

async function measureCreate(h: NotesHost): Promise<void> {
  const body = JSON.stringify({ item_id: h.itemId, body: "Bench note [<id>]: called, **follow up** on Friday." });
  const probe = await fetch(`${h.serverUrl}/v1/ext/notes`, { method: "POST", headers: { ...h.headers, "content-type": "application/json" }, body: body.replace("[<id>]", "probe") });
  if (probe.status !== 201) throw new Error(`POST /v1/ext/notes probe answered ${probe.status}: ${(await probe.text()).slice(0, 200)}`);
  const bareRounds: LoadResult[] = [];
  const serverRounds: LoadResult[] = [];
  for (let r = 0; r < h.rounds; r++) {
    bareRounds.push(await h.load(`bare note insert, round ${r + 1}`, { url: h.baselineUrl, method: "POST", path: "/notes", body, uniqueIds: true }, r === 0));
    serverRounds.push(
      await h.load(`server note create, round ${r + 1}`, { url: h.serverUrl, method: "POST", path: "/v1/ext/notes", body, uniqueIds: true, headers: h.headers }, r === 0),
    );
  }
  const b = combineRounds(bareRounds);
  const s = combineRounds(serverRounds);
  h.figures.push(
    { item: CREATE_ITEM, metric: "Note create (with note.created): server", value: s.reqPerSec, display: `${rps(s.reqPerSec)} (${h.latencyText(s)})` },
    { item: CREATE_ITEM, metric: "Note create: bare Express + INSERT, no auth", value: b.reqPerSec, display: `${rps(b.reqPerSec)} (${h.latencyText(b)})` },
    { item: CREATE_ITEM, metric: "Note create: server / bare throughput (issue 30: no worse than item create's)", value: s.reqPerSec / b.reqPerSec, display: ratio(s.reqPerSec / b.reqPerSec) },
  );
  h.roundsTable("Note create", bareRounds, serverRounds, "one item; each create writes its note.created outbox event, no subscriptions");
}

/**
 * Seeds the company's notes up to `total` (ids `bench-note-<g>`, g ascending, one millisecond apart): every
 * (`smallSize` / ITEM_NOTES)-th of the first `smallSize` goes to the measured item, every other note to one of up to
 * 1,000 other items of the company, so the item keeps ITEM_NOTES notes at every size, spread over the time range.
 */
async function seedNotes(sql: Sql, h: NotesHost, from: number, total: number, smallSize: number): Promise<void> {
  const every = Math.max(1, Math.floor(smallSize / ITEM_NOTES));
  await sql.query(
    `WITH others AS (
       SELECT array_agg(id) AS ids FROM (SELECT id FROM items WHERE company_id = $1 AND id <> $2 ORDER BY id LIMIT 1000) o
     )
     INSERT INTO notes (id, company_id, item_id, body, pinned, created_by, created_at, updated_at, version)
     SELECT 'bench-note-' || g, $1,
       CASE WHEN g <= $5 AND g % $6 = 0 THEN $2 ELSE others.ids[1 + g % cardinality(others.ids)] END,
       'Seeded note ' || g || ': called the lead, **follow up** next week.', g % 7 = 0, 'bench',
       timestamptz '2026-01-01T00:00:00Z' + g * interval '1 millisecond', timestamptz '2026-01-01T00:00:00Z' + g * interval '1 millisecond', 1
     FROM generate_series($3::int, $4::int) AS g, others`,
    [h.companyId, h.itemId, from, total, smallSize, every],
  );
  await sql.exec("ANALYZE notes");
}

async function measureItemList(h: NotesHost, sql: Sql): Promise<void> {
  const [small, large] = noteSizes(h.quick);
  const path = `/v1/ext/notes?item_id=${encodeURIComponent(h.itemId)}&limit=100`;
  const results: LoadResult[] = [];
  let seeded = 0;
  for (const size of [small, large]) {
    const started = Date.now();
    await seedNotes(sql, h, seeded + 1, size, small);
    seeded = size;
    h.log(`    seeded ${sizeLabel(size)} notes in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const check = await fetch(`${h.serverUrl}${path}`, { headers: h.headers });
    const page = (await check.json()) as unknown[];
    if (check.status !== 200 || page.length < ITEM_NOTES) throw new Error(`GET ${path} answered ${check.status} with ${page.length} notes (expected at least ${ITEM_NOTES})`);
    results.push(await h.load(`GET one item's notes, ${sizeLabel(size)} notes in the company`, { url: h.serverUrl, path, headers: h.headers }));
  }
  const [s, l] = results as [LoadResult, LoadResult];
  const cost = s.reqPerSec / l.reqPerSec;
  h.figures.push(
    { item: LIST_ITEM, metric: `One item's notes (${ITEM_NOTES}), ${sizeLabel(small)} notes in the company`, value: s.reqPerSec, display: `${rps(s.reqPerSec)} (${h.latencyText(s)})` },
    { item: LIST_ITEM, metric: `One item's notes (${ITEM_NOTES}), ${sizeLabel(large)} notes in the company`, value: l.reqPerSec, display: `${rps(l.reqPerSec)} (${h.latencyText(l)})` },
    {
      item: LIST_ITEM,
      metric: `One item's notes: cost at ${sizeLabel(large)} / ${sizeLabel(small)} notes`,
      value: cost,
      display: ratio(cost),
      ...(h.quick ? {} : { target: { op: "<=" as const, limit: TARGET_RATIO, text: `≤ ${TARGET_RATIO}x` } }),
    },
  );
}

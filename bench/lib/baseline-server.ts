/**
 * The bare baseline the server is compared with (issue #4, items 1 and 2): Express 5 with two handlers and no
 * auth, no rate limit, no validation, no logging and no outbox:
 * - `GET /items`: the first page of the company's items, newest first, as the Item format; one SQL statement that
 *   joins pipeline, stage and status names, ordered by the same index the server's list uses.
 * - `POST /items`: one `INSERT ... RETURNING` of the same row the API would store (same columns, same JSON), joined
 *   to the names for the Item format.
 * - `DELETE /items/:id` (issue 25): the writes of the API's delete in one transaction, hand-written: lock the company
 *   and the item (joined to its names, for the item.deleted body), lock its tasks, erase its earlier events and end
 *   their pending deliveries, clear their attempts' excerpts, replace its stored create responses, write the audit
 *   row, unlink the tasks, delete the row and insert the item.deleted event (no subscribers: stored erased). `204`.
 * - `POST /notes` (issue 30): one `INSERT ... SELECT ... RETURNING` of the note the API would store, from the
 *   company's item of `item_id` (the same reference check, no lock), answered in the Note format. `201`, or `422`.
 * - `POST /upsert` (issue 25): the match SELECT of the pipeline's first duplicate-detection field (compared as the
 *   server compares it: trimmed, case-insensitive), then the INSERT above (no match) or one `UPDATE ... RETURNING` of
 *   the same columns the API stores (metadata merged, version + 1); no transaction, no lock, no outbox.
 *
 * On PostgreSQL it uses a `pg` pool (as many connections as the server's pool) on the same schema as the server.
 * On PGlite it opens its OWN copy of the server's data directory: PGlite is single-process, so the server's
 * database cannot be shared; the copy is taken right after seeding, so both read identical rows.
 *
 * This file is both the launcher (`startBaseline`, used by run.ts) and the child program (run with
 * `node --import tsx bench/lib/baseline-server.ts`), so the baseline is pinned to the same core as the server.
 */
import { spawn, type ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { openPglite, openPgPool } from "./db";
import { pinnedCommand } from "./server-process";

export interface BaselineOptions {
  kind: "pglite" | "postgres";
  /** PGlite: the directory of the baseline's own copy (a `pglite` data directory). */
  pgliteDir?: string;
  /** PostgreSQL: the server's DATABASE_URL (with `?schema=`). */
  databaseUrl?: string;
  companyId: string;
  /** pg pool size (match the server's DATABASE_POOL_SIZE, default 10). */
  poolSize: number;
  /** CPU core to pin the process to, or null. */
  core: number | null;
  /** When set, run under `node --cpu-prof` writing `CPU.*.cpuprofile` files (one per thread) here (BENCH_CPU_PROF=1). */
  cpuProfDir?: string;
}

export interface RunningBaseline {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

type Query = (sql: string, params: unknown[]) => Promise<Record<string, any>[]>;
/** Runs `fn` in one transaction, its statements through the query it is given. */
type InTransaction = <T>(fn: (q: Query) => Promise<T>) => Promise<T>;

const ITEM_COLUMNS = `i.id, i.short_id, i.name, i.contact_id, i.source, i.metadata, i.version, i.created_at, i.updated_at,
  p.id AS pipeline_id, p.name AS pipeline_name, s.id AS stage_id, s.name AS stage_name, st.id AS status_id, st.name AS status_name`;

const LIST_SQL = `SELECT ${ITEM_COLUMNS}
  FROM items i
  JOIN pipelines p ON p.id = i.pipeline_id
  JOIN stages s ON s.id = i.stage_id
  JOIN statuses st ON st.id = i.status_id
  WHERE i.company_id = $1
  ORDER BY i.created_at DESC, i.id DESC
  LIMIT $2`;

/** The changed row `i` of a data-modifying CTE, joined to its pipeline, stage and status names. */
const NAMED_ROW = `SELECT ${ITEM_COLUMNS}
  FROM i
  JOIN pipelines p ON p.id = i.pipeline_id
  JOIN stages s ON s.id = i.stage_id
  JOIN statuses st ON st.id = i.status_id`;

/** The statements of the bare delete (see the file's header), in order; `$1` company, `$2` item. */
const DELETE_SQL = {
  company: `SELECT id FROM companies WHERE id = $1 FOR KEY SHARE`,
  item: `SELECT ${ITEM_COLUMNS}
    FROM items i JOIN pipelines p ON p.id = i.pipeline_id JOIN stages s ON s.id = i.stage_id JOIN statuses st ON st.id = i.status_id
    WHERE i.id = $2 AND i.company_id = $1 FOR UPDATE OF i`,
  tasks: `SELECT id FROM tasks WHERE company_id = $1 AND item_id = $2 ORDER BY id FOR UPDATE`,
  erase: `WITH ev AS (SELECT id FROM webhook_events WHERE company_id = $1 AND resource_id = $2 AND type LIKE 'item.%'),
    ended AS (UPDATE webhook_deliveries SET state = 'failed', completed_at = now() WHERE event_id IN (SELECT id FROM ev) AND state = 'pending' RETURNING id),
    excerpts AS (UPDATE webhook_attempts a SET response_excerpt = NULL FROM webhook_deliveries d
      WHERE d.event_id IN (SELECT id FROM ev) AND a.delivery_id = d.id AND a.response_excerpt IS NOT NULL RETURNING a.id)
    UPDATE webhook_events SET payload = json_build_object('item_id', resource_id, 'erased', true), erased_at = now() WHERE id IN (SELECT id FROM ev)`,
  writes: `WITH replays AS (UPDATE idempotency_keys SET status = 410, response_body = '{}', location = NULL WHERE company_id = $1 AND location = $3 RETURNING key),
    audited AS (INSERT INTO audit_events (id, company_id, actor_type, actor_id, actor_label, action, target_type, target_id, target_label, details)
      VALUES ($4, $1, 'api_key', NULL, 'bare', 'item.deleted', 'item', $2, $5, '{}'::jsonb) RETURNING id),
    unlinked AS (UPDATE tasks SET item_id = NULL, updated_at = now() WHERE company_id = $1 AND id = ANY ($6::text[]) RETURNING id),
    gone AS (DELETE FROM items WHERE id = $2 AND company_id = $1 RETURNING id)
    INSERT INTO webhook_events (id, company_id, type, resource_id, payload, erased_at)
    SELECT $7, $1, 'item.deleted', $2, CASE WHEN EXISTS (SELECT 1 FROM webhook_subscriptions WHERE company_id = $1 AND 'item.deleted' = ANY (events))
      THEN $8::json ELSE json_build_object('item_id', $2::text, 'erased', true) END, now() FROM gone`,
};
const INSERT_SQL = `WITH i AS (
    INSERT INTO items (id, company_id, pipeline_id, stage_id, status_id, short_id, name, contact_id, source, metadata, version, created_at, updated_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, 1, now(), now())
    RETURNING *)
  ${NAMED_ROW}`;

/**
 * The items of the pipeline whose custom field `$3` equals `$4` as the server's duplicate detection compares text,
 * through the same GIN index (items_match_metadata_idx) as the server's match query.
 */
const MATCH_SQL = `SELECT i.id FROM items i
  WHERE i.company_id = $1 AND i.pipeline_id = $2
    AND stageline_match_metadata(i.metadata) @> jsonb_build_object($3::text, lower(btrim($4::text, E' \\t\\r\\n')))
    AND jsonb_typeof(i.metadata -> $3::text) = 'string'
    AND lower(btrim(i.metadata ->> $3::text, E' \\t\\r\\n')) = lower(btrim($4::text, E' \\t\\r\\n'))
  ORDER BY i.created_at DESC, i.id DESC LIMIT 2`;

const UPDATE_SQL = `WITH i AS (
    UPDATE items SET name = $3, stage_id = $4, status_id = $5, metadata = metadata || $6::jsonb, version = version + 1, updated_at = now()
    WHERE id = $1 AND company_id = $2
    RETURNING *)
  ${NAMED_ROW}`;

/** The bare note create: the row from the company's item (as the API's reference check), no lock, no outbox. */
const NOTE_INSERT_SQL = `INSERT INTO notes (id, company_id, item_id, body, pinned, created_by, created_at, updated_at, version)
  SELECT $1, $2, i.id, $4, $5, $6, now(), now(), 1 FROM items i WHERE i.id = $3 AND i.company_id = $2
  RETURNING id, item_id, body, pinned, created_by, created_at, updated_at, version`;

const iso = (v: unknown) => (v instanceof Date ? v : new Date(String(v))).toISOString();

/** The Item format (spec "Item (response)", server/src/services/item-format.ts) from one joined row. */
function toItem(row: Record<string, any>, customKeys: Map<string, string[]>) {
  const metadata = (typeof row.metadata === "string" ? JSON.parse(row.metadata) : row.metadata ?? {}) as Record<string, unknown>;
  const custom: Record<string, unknown> = {};
  for (const key of customKeys.get(row.pipeline_id) ?? []) custom[key] = metadata[key] ?? null;
  return {
    item_id: row.id,
    short_id: row.short_id,
    name: row.name,
    pipeline: row.pipeline_name,
    pipeline_id: row.pipeline_id,
    stage: row.stage_name,
    stage_id: row.stage_id,
    status: row.status_name,
    status_id: row.status_id,
    contact_id: row.contact_id,
    source: row.source,
    ...custom,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    version: row.version,
  };
}

/** Runs the baseline HTTP server in this process (the child side). Prints `Baseline listening on <url>`. */
async function main(): Promise<void> {
  const { default: express } = await import("express");
  const kind = process.env.BASELINE_DB;
  const companyId = process.env.BASELINE_COMPANY_ID!;
  let query: Query;
  let inTransaction: InTransaction;
  let close: () => Promise<void>;
  if (kind === "pglite") {
    const db = await openPglite(process.env.BASELINE_PGLITE_DIR!);
    query = async (sql, params) => (await db.query<Record<string, any>>(sql, params)).rows;
    inTransaction = (fn) => db.transaction((tx) => fn(async (sql, params) => (await tx.query<Record<string, any>>(sql, params)).rows));
    close = () => db.close();
  } else {
    const pool = await openPgPool(process.env.BASELINE_DATABASE_URL!, Number(process.env.BASELINE_POOL_SIZE ?? 10));
    query = async (sql, params) => (await pool.query(sql, params)).rows;
    inTransaction = async (fn) => {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const result = await fn(async (sql, params) => (await client.query(sql, params)).rows);
        await client.query("COMMIT");
        return result;
      } catch (err) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    };
    close = () => pool.end();
  }
  // Custom field keys per pipeline, read once (the server caches parsed blueprints too), and its first
  // duplicate-detection field (the upsert's match key).
  const customKeys = new Map<string, string[]>();
  const matchField = new Map<string, string>();
  for (const p of await query(`SELECT id, blueprint FROM pipelines WHERE company_id = $1`, [companyId])) {
    const blueprint = typeof p.blueprint === "string" ? JSON.parse(p.blueprint) : p.blueprint;
    customKeys.set(p.id, (blueprint?.custom_fields ?? []).map((f: { key: string }) => f.key));
    const field = blueprint?.duplicate_detection?.fields?.[0];
    if (typeof field === "string") matchField.set(p.id, field);
  }
  // First status of each stage, for a create without status_id (as the API does).
  const firstStatus = new Map<string, string>();
  for (const s of await query(
    `SELECT DISTINCT ON (st.stage_id) st.stage_id, st.id FROM statuses st JOIN stages s ON s.id = st.stage_id
      JOIN pipelines p ON p.id = s.pipeline_id WHERE p.company_id = $1 ORDER BY st.stage_id, st.position, st.id`,
    [companyId],
  )) {
    firstStatus.set(s.stage_id, s.id);
  }
  let shortCounter = 0;
  const shortPrefix = `BARE${process.pid}`;

  const app = express();
  app.disable("x-powered-by");
  app.set("json spaces", 0);
  app.use(express.json({ limit: "1mb" }));
  app.get("/items", async (req, res) => {
    const limit = Math.min(Math.max(Number(req.query.limit ?? 100) || 100, 1), 500);
    const rows = await query(LIST_SQL, [companyId, limit + 1]);
    const page = rows.slice(0, limit);
    if (rows.length > limit) {
      const last = page[page.length - 1]!;
      const cursor = Buffer.from(JSON.stringify([iso(last.created_at), last.id])).toString("base64url");
      res.setHeader("Link", `</items?limit=${limit}&cursor=${cursor}>; rel="next"`);
    }
    res.json(page.map((r) => toItem(r, customKeys)));
  });
  type Body = { name: string; pipeline_id: string; stage_id: string; status_id?: string; contact_id?: string; source?: string; metadata?: object };
  const insert = (b: Body) =>
    query(INSERT_SQL, [
      crypto.randomUUID(),
      companyId,
      b.pipeline_id,
      b.stage_id,
      b.status_id ?? firstStatus.get(b.stage_id),
      `${shortPrefix}-${++shortCounter}`,
      b.name,
      b.contact_id ?? null,
      b.source ?? "api",
      JSON.stringify(b.metadata ?? {}),
    ]);
  app.post("/items", async (req, res) => {
    const rows = await insert(req.body as Body);
    res.status(201).json(toItem(rows[0]!, customKeys));
  });
  app.delete("/items/:id", async (req, res) => {
    const id = String(req.params.id);
    const found = await inTransaction(async (q) => {
      if ((await q(DELETE_SQL.company, [companyId])).length === 0) return false;
      const [row] = await q(DELETE_SQL.item, [companyId, id]);
      if (!row) return false;
      const tasks = (await q(DELETE_SQL.tasks, [companyId, id])).map((t) => t.id as string);
      await q(DELETE_SQL.erase, [companyId, id]);
      const body = JSON.stringify({ ...toItem(row, customKeys), deleted_at: new Date().toISOString() });
      await q(DELETE_SQL.writes, [companyId, id, `/v1/ext/items/${id}`, crypto.randomUUID(), row.short_id, tasks, crypto.randomUUID(), body]);
      return true;
    });
    res.status(found ? 204 : 404).end();
  });
  app.post("/notes", async (req, res) => {
    const b = req.body as { item_id: string; body: string; pinned?: boolean };
    const [row] = await query(NOTE_INSERT_SQL, [crypto.randomUUID(), companyId, b.item_id, b.body, b.pinned ?? false, "bare"]);
    if (!row) return void res.status(422).end();
    res.status(201).json({
      note_id: row.id,
      item_id: row.item_id,
      body: row.body,
      pinned: row.pinned,
      created_by: row.created_by,
      created_at: iso(row.created_at),
      updated_at: iso(row.updated_at),
      version: row.version,
    });
  });
  app.post("/upsert", async (req, res) => {
    const b = req.body as Body;
    const field = matchField.get(b.pipeline_id) ?? "email";
    const value = (b.metadata as Record<string, unknown> | undefined)?.[field];
    const hits = await query(MATCH_SQL, [companyId, b.pipeline_id, field, String(value ?? "")]);
    if (hits.length === 0) {
      res.status(201).json(toItem((await insert(b))[0]!, customKeys));
      return;
    }
    const status = b.status_id ?? firstStatus.get(b.stage_id);
    const rows = await query(UPDATE_SQL, [hits[0]!.id, companyId, b.name, b.stage_id, status, JSON.stringify(b.metadata ?? {})]);
    res.status(200).json(toItem(rows[0]!, customKeys));
  });
  app.use((err: Error, _req: unknown, res: import("express").Response, _next: unknown) => {
    process.stderr.write(`baseline error: ${err.stack ?? err.message}\n`);
    res.status(500).json({ error: err.message });
  });
  const server = app.listen(0, "127.0.0.1", () => {
    process.stdout.write(`Baseline listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
  });
  server.keepAliveTimeout = 5_000;
  const stop = () => {
    server.close();
    server.closeAllConnections();
    close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

/** Starts the baseline as a child process (pinned like the server) and resolves once it listens. */
export async function startBaseline(options: BaselineOptions): Promise<RunningBaseline> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    BASELINE_DB: options.kind,
    BASELINE_COMPANY_ID: options.companyId,
    BASELINE_POOL_SIZE: String(options.poolSize),
    BASELINE_PGLITE_DIR: options.pgliteDir ?? "",
    BASELINE_DATABASE_URL: options.databaseUrl ?? "",
  };
  // Node's default profile names (CPU.<date>.<pid>.<thread>...) keep tsx's loader thread from overwriting the main one.
  const profArgs = options.cpuProfDir ? ["--cpu-prof", `--cpu-prof-dir=${options.cpuProfDir}`] : [];
  const [cmd, ...args] = pinnedCommand(options.core, [process.execPath, ...profArgs, "--import", "tsx", path.resolve(__filename)]);
  const child: ChildProcess = spawn(cmd!, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`baseline did not start within 60 s\n${stderr}`)), 60_000);
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /Baseline listening on (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`baseline exited with code ${code} before listening\n${stderr}`));
    });
  });
  return {
    url,
    pid: child.pid!,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const kill = setTimeout(() => child.kill("SIGKILL"), 10_000);
        child.once("exit", () => {
          clearTimeout(kill);
          resolve();
        });
        child.kill("SIGTERM");
      }),
  };
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`baseline failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}

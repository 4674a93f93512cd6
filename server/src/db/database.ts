/**
 * Opens the database: the embedded PGlite default, or PostgreSQL when a `postgresql://` URL is given.
 * Both are reached through one Prisma client (driver adapters), so every query in `db/` runs on either; the hot
 * paths use `sql` (db/sql.ts), raw parameterized statements on the same PGlite instance or pg pool.
 */
import fs from "node:fs";
import path from "node:path";
import { PrismaClient } from "../generated/prisma/client";
import { namedStatementRunner } from "./pglite-statements";
import { registerSqlRunner, type QueryOptions, type SqlRunner } from "./sql";

export type DatabaseKind = "pglite" | "postgres";

export interface Database {
  prisma: PrismaClient;
  /** Raw parameterized SQL on the same database, bypassing Prisma (hot paths; see db/sql.ts). */
  sql: SqlRunner;
  kind: DatabaseKind;
  /** Runs a multi-statement SQL script as one query (migrations; `$$` bodies stay intact). */
  executeScript(sql: string): Promise<void>;
  /** For PostgreSQL: the pg pool (LISTEN/NOTIFY needs a dedicated client). Undefined on PGlite. */
  pgPool?: import("pg").Pool;
  /** PostgreSQL schema in use ("public" unless `?schema=` was given). */
  schema: string;
  /**
   * PGlite only: the whole data directory as an uncompressed tar (`PGlite.dumpDataDir`), which `OpenOptions.template`
   * loads again. Undefined on PostgreSQL.
   */
  dumpDataDir?(): Promise<Blob>;
  /** Disconnects Prisma and closes PGlite / the pg pool. Safe to call twice. */
  close(): Promise<void>;
}

export interface OpenOptions {
  databaseUrl?: string;
  /** PGlite data directory, or `memory://` for an in-memory database. */
  dataDir: string;
  /**
   * In-memory PGlite only: path of a data-directory dump (the tar `PGlite.dumpDataDir()` writes) the new database
   * starts from, instead of an empty cluster made by initdb. The test helpers dump a migrated database once and
   * start every test server from it (server/test/helpers/pglite-template.ts). Ignored for PostgreSQL and on disk.
   */
  template?: string;
}

/**
 * Opens PGlite (when `databaseUrl` is unset) or PostgreSQL. A `?schema=NAME` query parameter on the URL selects
 * (and creates) a schema, so test runs can each use a fresh one on a shared server.
 * @throws when the database cannot be reached.
 */
export async function openDatabase(options: OpenOptions): Promise<Database> {
  return options.databaseUrl ? openPostgres(options.databaseUrl) : openPglite(options.dataDir, options.template);
}

/** The directory PGlite keeps its files in for `dataDir` (`DATA_DIR/pglite`, absolute). */
export function pgliteDirectory(dataDir: string): string {
  return path.resolve(dataDir, "pglite");
}

/**
 * True when an embedded (PGlite) database already exists in `dataDir` (its `PG_VERSION` file is there). Creates
 * nothing: `openDatabase` on a `dataDir` without one would create a new, empty database.
 */
export function embeddedDatabaseExists(dataDir: string): boolean {
  return fs.existsSync(path.join(pgliteDirectory(dataDir), "PG_VERSION"));
}

/** Dumps read by `templateData`, per path: one read per process, shared by every database started from it. */
const templates = new Map<string, Blob>();

/** The dump at `file` as the Blob PGlite's `loadDataDir` takes (read once per process). */
function templateData(file: string): Blob {
  let blob = templates.get(file);
  if (!blob) templates.set(file, (blob = new Blob([fs.readFileSync(file)])));
  return blob;
}

async function openPglite(dataDir: string, template?: string): Promise<Database> {
  const pglitePackage = await import("@electric-sql/pglite");
  const { PGlite } = pglitePackage;
  const { PrismaPGlite } = await import("pglite-prisma-adapter");
  const inMemory = dataDir === "memory://" || dataDir === "";
  const dir = inMemory ? undefined : pgliteDirectory(dataDir);
  if (dir) fs.mkdirSync(dir, { recursive: true });
  const loadDataDir = inMemory && template ? templateData(template) : undefined;
  // pg_trgm: the GIN trigram index behind the items list's `q` filter (migration 20261123100001_item_list_filters).
  // The package exports "./contrib/*"; the repository's "node" module resolution reads no exports for types.
  const { pg_trgm } = require("@electric-sql/pglite/contrib/pg_trgm") as { pg_trgm: import("@electric-sql/pglite").Extension };
  const pglite = new PGlite({ dataDir: dir, extensions: { pg_trgm }, ...(loadDataDir ? { loadDataDir } : {}) });
  await pglite.waitReady;
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(pglite) });
  const named = namedStatementRunner(pglite, pglitePackage);
  // PGlite's query() waits for any open transaction (Prisma's interactive ones included), so it never interleaves;
  // a named statement (hot paths) takes the same locks (db/pglite-statements.ts).
  const sql: SqlRunner = {
    concurrent: false,
    query: async <T>(text: string, params: readonly unknown[] = [], options?: QueryOptions) =>
      options?.name ? named<T>(text, params, options.name) : (await pglite.query<T>(text, params as unknown[])).rows,
    transaction: (fn) =>
      pglite.transaction((tx) => fn(async <T>(text: string, params: readonly unknown[] = []) => (await tx.query<T>(text, params as unknown[])).rows)),
  };
  registerSqlRunner(prisma, sql);
  let closed = false;
  return {
    prisma,
    sql,
    kind: "pglite",
    schema: "public",
    executeScript: async (sql) => {
      await pglite.exec(sql);
    },
    dumpDataDir: () => pglite.dumpDataDir("none"),
    close: async () => {
      if (closed) return;
      closed = true;
      await prisma.$disconnect();
      await pglite.close();
    },
  };
}

async function openPostgres(databaseUrl: string): Promise<Database> {
  const pg = await import("pg");
  const { PrismaPg } = await import("@prisma/adapter-pg");
  const url = new URL(databaseUrl);
  const schema = url.searchParams.get("schema") ?? "public";
  url.searchParams.delete("schema");
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid schema name in DATABASE_URL: ${schema}`);
  const pool = new pg.Pool({
    connectionString: url.toString(),
    max: Number(process.env.DATABASE_POOL_SIZE ?? 10),
    options: `-c search_path="${schema}"`,
  });
  pool.on("error", () => undefined); // idle-client errors surface on the next query instead of crashing
  // A client checked out of the pool (a transaction: ours below, Prisma's, the migrations' lock) has no error
  // listener of pg-pool's, so a connection that ends under it (the database crashed, restarted or became unreachable)
  // emitted an unhandled 'error' and ended the process. The error also fails the client's queries, which is how its
  // holder learns of it; pg-pool then drops the unqueryable client when it is released (issue 39).
  pool.on("connect", (client) => client.on("error", () => undefined));
  await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool, { schema }) });
  const sql: SqlRunner = {
    concurrent: true,
    query: async <T>(text: string, params: readonly unknown[] = [], options?: QueryOptions) =>
      (await pool.query({ text, values: params as unknown[], ...(options?.name ? { name: options.name } : {}) })).rows as T[],
    transaction: async (fn) => {
      const client = await pool.connect();
      let broken: unknown = undefined;
      try {
        await client.query("BEGIN");
        const result = await fn(
          async <T>(text: string, params: readonly unknown[] = [], options?: QueryOptions) =>
            (await client.query({ text, values: params as unknown[], ...(options?.name ? { name: options.name } : {}) })).rows as T[],
        );
        await client.query("COMMIT");
        return result;
      } catch (err) {
        // A failed ROLLBACK means the connection is unusable: destroy it instead of returning it to the pool.
        await client.query("ROLLBACK").catch((rollbackError: unknown) => (broken = rollbackError));
        throw err;
      } finally {
        client.release(broken instanceof Error ? broken : undefined);
      }
    },
  };
  registerSqlRunner(prisma, sql);
  let closed = false;
  return {
    prisma,
    sql,
    kind: "postgres",
    schema,
    pgPool: pool,
    executeScript: async (sql) => {
      await pool.query(sql);
    },
    close: async () => {
      if (closed) return;
      closed = true;
      await prisma.$disconnect();
      await pool.end().catch(() => undefined);
    },
  };
}

/**
 * Direct SQL access for the benchmark (seeding, version queries, the bare baseline): PostgreSQL through `pg`, or a
 * PGlite data directory opened in this process. The server is never bypassed for what is measured; this is only for
 * bulk seeding (not through the API, as issue #4 asks) and for the bare handlers that the server is compared with.
 */
import path from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import type { Pool, PoolConfig } from "pg";

/** A minimal SQL runner over either database. */
export interface Sql {
  kind: "pglite" | "postgres";
  /** Runs one parameterised statement and returns its rows. */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Runs a script of several statements (no parameters). */
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
}

/** Where a benchmark database lives: a PGlite data directory (the server's DATA_DIR) or a PostgreSQL URL. */
export type DbLocation = { kind: "pglite"; dataDir: string } | { kind: "postgres"; url: string };

/**
 * Splits `?schema=name` off a PostgreSQL URL the way the server does (server/src/db/database.ts), so the bench
 * talks to the same schema as the server it measures.
 */
export function pgPoolConfig(databaseUrl: string, max = 1): PoolConfig & { schema: string } {
  const url = new URL(databaseUrl);
  const schema = url.searchParams.get("schema") ?? "public";
  url.searchParams.delete("schema");
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid schema name in DATABASE_URL: ${schema}`);
  return { connectionString: url.toString(), max, options: `-c search_path="${schema}"`, schema };
}

/** The PGlite directory inside a server DATA_DIR (server/src/db/database.ts keeps it in `<DATA_DIR>/pglite`). */
export function pgliteDirOf(dataDir: string): string {
  return path.resolve(dataDir, "pglite");
}

/** Opens a PGlite directory in this process. Only while no server holds it: PGlite is single-process. */
export async function openPglite(dir: string): Promise<PGlite> {
  const { PGlite } = await import("@electric-sql/pglite");
  // pg_trgm: the items table's trigram index (the list's `q` filter) needs the extension loaded to take inserts.
  // The package exports "./contrib/*"; the repository's "node" module resolution reads no exports for types.
  const { pg_trgm } = require("@electric-sql/pglite/contrib/pg_trgm") as { pg_trgm: import("@electric-sql/pglite").Extension };
  const db = new PGlite({ dataDir: dir, extensions: { pg_trgm } });
  await db.waitReady;
  return db;
}

/** Opens a pg pool on the URL's schema. */
export async function openPgPool(databaseUrl: string, max: number): Promise<Pool> {
  const pg = await import("pg");
  const { schema: _schema, ...config } = pgPoolConfig(databaseUrl, max);
  const pool = new pg.Pool(config);
  pool.on("error", () => undefined);
  return pool;
}

/** Opens a single-connection SQL runner on a benchmark database. */
export async function openSql(location: DbLocation): Promise<Sql> {
  if (location.kind === "pglite") {
    const db = await openPglite(pgliteDirOf(location.dataDir));
    return {
      kind: "pglite",
      query: async <T>(sql: string, params: unknown[] = []) => (await db.query<T>(sql, params)).rows,
      exec: async (sql) => {
        await db.exec(sql);
      },
      close: () => db.close(),
    };
  }
  const pool = await openPgPool(location.url, 1);
  return {
    kind: "postgres",
    query: async <T>(sql: string, params: unknown[] = []) => (await pool.query(sql, params)).rows as T[],
    exec: async (sql) => {
      await pool.query(sql);
    },
    close: () => pool.end(),
  };
}

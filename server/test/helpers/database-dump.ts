/**
 * Whole-database dumps for erasure tests (CONTRACT "Item deletion and erasure", issue 25): the test searches the
 * dump, never a list of tables, so a table added later cannot hide a copy of erased data.
 *
 * - `catalogDump`: every row of every table (ordinary, partitioned, materialized view) of every schema the catalog
 *   lists except PostgreSQL's own (`pg_catalog`, `information_schema`, TOAST and temporary schemas), each row as its
 *   record text (`t::text`, every column), found through `pg_class`/`pg_namespace` at dump time. Works on PGlite
 *   (no pg_dump there) and PostgreSQL alike.
 * - `pgDump`: `pg_dump` of one PostgreSQL schema (plain format: definitions and every row as COPY data).
 */
import { execFileSync } from "node:child_process";
import type { SqlRunner } from "../../src/db/sql";

/** Tables the catalog lists outside PostgreSQL's own schemas, as quoted `schema.table` names. */
async function userTables(sql: SqlRunner, schema?: string): Promise<string[]> {
  const rows = await sql.query<{ name: string }>(
    `SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) AS name
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relkind IN ('r', 'p', 'm')
       AND n.nspname NOT IN ('pg_catalog', 'information_schema')
       AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp%'
       AND ($1::text IS NULL OR n.nspname = $1::text)
     ORDER BY 1`,
    [schema ?? null],
  );
  return rows.map((r) => r.name);
}

/**
 * Every row of every user table (of `schema` only, when given: a shared PostgreSQL server holds other test runs'
 * schemas), as text: a `-- table` line, then one line per row.
 * @returns the dump and the tables it read (a test can check the list is not empty).
 */
export async function catalogDump(sql: SqlRunner, schema?: string): Promise<{ text: string; tables: string[] }> {
  const tables = await userTables(sql, schema);
  const parts: string[] = [];
  for (const table of tables) {
    const rows = await sql.query<{ row: string }>(`SELECT t::text AS row FROM ${table} t`);
    parts.push(`-- ${table}`, ...rows.map((r) => r.row));
  }
  return { text: parts.join("\n"), tables };
}

/**
 * `pg_dump` (plain SQL, schema and data) of the schema named by `?schema=` in `databaseUrl` (a URL as the tests'
 * stores build it).
 * @throws when pg_dump fails (its stderr in the message).
 */
export function pgDump(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  const schema = url.searchParams.get("schema");
  if (!schema) throw new Error("pgDump: the URL names no schema");
  url.search = "";
  return execFileSync("pg_dump", ["--no-owner", "--no-privileges", "--schema", schema, url.toString()], {
    encoding: "utf8",
    maxBuffer: 512 * 1024 * 1024,
    stdio: ["ignore", "pipe", "pipe"],
  });
}

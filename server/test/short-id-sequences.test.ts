/**
 * Migration 20261121090000_short_id_sequences: per-pipeline short-id sequences that continue the old counters,
 * are created with every new pipeline and dropped with it. Runs on PGlite, and on PostgreSQL under CI's
 * TEST_DATABASE_URL (a fresh schema).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { openDatabase, type Database } from "../src/db/database";
import { applyMigrations, MIGRATIONS_DIR } from "../src/db/migrations";
import { testConfig } from "./helpers/test-server";

const MIGRATION = "20261121090000_short_id_sequences";

describe("short-id sequences (migration)", () => {
  let db: Database;
  let historyBefore: string;

  beforeAll(async () => {
    const config = testConfig();
    db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir! });
    historyBefore = fs.mkdtempSync(path.join(os.tmpdir(), "stageline-migrations-"));
    for (const name of fs.readdirSync(MIGRATIONS_DIR)) {
      if (name < MIGRATION && fs.statSync(path.join(MIGRATIONS_DIR, name)).isDirectory()) {
        fs.cpSync(path.join(MIGRATIONS_DIR, name), path.join(historyBefore, name), { recursive: true });
      }
    }
  });
  afterAll(async () => {
    if (db?.kind === "postgres") await db.pgPool!.query(`DROP SCHEMA IF EXISTS "${db.schema}" CASCADE`);
    await db?.close();
    fs.rmSync(historyBefore, { recursive: true, force: true });
  });

  const sql = <T>(text: string, ...params: unknown[]) => db.prisma.$queryRawUnsafe<T[]>(text, ...params);
  const nextNumber = async (pipelineId: string) =>
    (await sql<{ n: number }>(`SELECT nextval(pipeline_short_id_sequence($1)::regclass)::int AS n`, pipelineId))[0]!.n;
  const sequenceCount = async () =>
    (
      await sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
         WHERE c.relkind = 'S' AND c.relname LIKE 'pipeline\\_short\\_id\\_%' AND s.nspname = $1`,
        db.schema,
      )
    )[0]!.n;

  it("continues each existing pipeline's counter, then drops the old column", async () => {
    await applyMigrations(db, historyBefore);
    await sql(`INSERT INTO companies (id, name) VALUES ('c1', 'Acme')`);
    await sql(
      `INSERT INTO pipelines (id, company_id, name, short_id_prefix, next_short_id) VALUES ('p-used', 'c1', 'Sales', 'SALES', 42), ('p-new', 'c1', 'Hiring', 'HIRE', 1)`,
    );
    expect(await applyMigrations(db)).toEqual([MIGRATION, ...fs.readdirSync(MIGRATIONS_DIR).filter((n) => n > MIGRATION && !n.endsWith(".toml"))]);
    expect(await nextNumber("p-used")).toBe(42);
    expect(await nextNumber("p-used")).toBe(43);
    expect(await nextNumber("p-new")).toBe(1);
    const columns = await sql<{ column_name: string }>(
      `SELECT column_name::text AS column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'pipelines'`,
      db.schema,
    );
    expect(columns.map((c) => c.column_name)).not.toContain("next_short_id");
  });

  it("creates a sequence with every new pipeline and drops it with the pipeline (also by cascade)", async () => {
    const before = await sequenceCount();
    await sql(`INSERT INTO companies (id, name) VALUES ('c2', 'Globex')`);
    await sql(`INSERT INTO pipelines (id, company_id, name, short_id_prefix) VALUES ('p-later', 'c2', 'Deals', 'DEAL')`);
    expect(await sequenceCount()).toBe(before + 1);
    expect(await nextNumber("p-later")).toBe(1);
    await sql(`DELETE FROM companies WHERE id = 'c2'`);
    expect(await sequenceCount()).toBe(before);
  });

  it("rolls the sequence back with a pipeline insert that rolls back", async () => {
    const before = await sequenceCount();
    await expect(
      db.prisma.$transaction(async (tx) => {
        await tx.$executeRawUnsafe(`INSERT INTO pipelines (id, company_id, name, short_id_prefix) VALUES ('p-gone', 'c1', 'Gone', 'GONE')`);
        throw new Error("abort");
      }),
    ).rejects.toThrow("abort");
    expect(await sequenceCount()).toBe(before);
  });
});

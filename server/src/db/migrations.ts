/**
 * Applies the Prisma migration history (`server/prisma/migrations/<name>/migration.sql`) on start.
 *
 * Why not `prisma migrate deploy`: an in-memory PGlite (tests) cannot be shared with a CLI process, and the CLI
 * through adapter-pg splits scripts on `;` (prisma/orm#27403). This runner keeps Prisma's own bookkeeping table
 * `_prisma_migrations` (same columns and sha256 checksums), so `prisma migrate status` agrees with it.
 * Each migration runs as one script inside a transaction; on PostgreSQL an advisory lock serialises processes.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Database } from "./database";

export const MIGRATIONS_DIR = path.resolve(__dirname, "../../prisma/migrations");

const BOOKKEEPING = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

/** Advisory-lock key shared by every Stageline process ("stageline" as a 32-bit number). */
const LOCK_KEY = 0x5374676c;

/** The migrations of `dir` (folders holding a `migration.sql`), in name order, which is the order they apply in. */
function migrationNames(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && fs.existsSync(path.join(dir, e.name, "migration.sql")))
    .map((e) => e.name)
    .sort();
}

/**
 * True when the database `db` holds a Stageline schema: its migration bookkeeping table exists in `db.schema`. An
 * empty database (a new PGlite directory, a PostgreSQL schema nothing was migrated into) answers false. Reads only.
 */
export async function hasMigrations(db: Database): Promise<boolean> {
  const rows = await db.prisma.$queryRawUnsafe<{ present: boolean }[]>(
    `SELECT EXISTS (SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = '_prisma_migrations') AS present`,
    db.schema,
  );
  return rows[0]?.present === true;
}

/**
 * Applies every migration not yet recorded, in name order.
 * @returns the names of the migrations applied by this call.
 * @throws when a migration fails (its transaction is rolled back) or an applied migration's file was edited.
 */
export async function applyMigrations(db: Database, dir: string = MIGRATIONS_DIR): Promise<string[]> {
  const names = migrationNames(dir);
  const lockClient = db.pgPool ? await db.pgPool.connect() : undefined;
  await lockClient?.query(`SELECT pg_advisory_lock(${LOCK_KEY})`);
  try {
    await db.executeScript(BOOKKEEPING);
    const rows = await db.prisma.$queryRawUnsafe<{ migration_name: string; checksum: string }[]>(
      `SELECT migration_name, checksum FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
    );
    const applied = new Map(rows.map((r) => [r.migration_name, r.checksum]));
    const done: string[] = [];
    for (const name of names) {
      const sql = fs.readFileSync(path.join(dir, name, "migration.sql"), "utf8");
      const checksum = crypto.createHash("sha256").update(sql).digest("hex");
      const previous = applied.get(name);
      if (previous !== undefined) {
        if (previous !== checksum) throw new Error(`migration ${name} was modified after it was applied`);
        continue;
      }
      const id = crypto.randomUUID();
      const record = `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, applied_steps_count)
        VALUES ('${id}', '${checksum}', now(), '${name.replace(/'/g, "''")}', 1);`;
      await db.executeScript(`BEGIN;\n${sql}\n;${record}\nCOMMIT;`).catch(async (err: unknown) => {
        await db.executeScript("ROLLBACK").catch(() => undefined);
        throw new Error(`migration ${name} failed: ${(err as Error).message}`);
      });
      done.push(name);
    }
    return done;
  } finally {
    if (lockClient) {
      await lockClient.query(`SELECT pg_advisory_unlock(${LOCK_KEY})`).catch(() => undefined);
      lockClient.release();
    }
  }
}

const namesOnDisk = new Map<string, string[]>();

/**
 * The migrations of `dir` that the database has not applied (readiness, issue 17): read-only, one statement. The
 * folder is listed once per process (a running build's migrations do not change).
 * @returns their names in order; empty when the schema is up to date.
 * @throws the driver's error when the database is unreachable or has no `_prisma_migrations` table.
 */
export async function unappliedMigrations(db: Database, dir: string = MIGRATIONS_DIR): Promise<string[]> {
  let names = namesOnDisk.get(dir);
  if (!names) namesOnDisk.set(dir, (names = migrationNames(dir)));
  const rows = await db.sql.query<{ migration_name: string }>(
    `SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
  );
  const applied = new Set(rows.map((r) => r.migration_name));
  return names.filter((name) => !applied.has(name));
}

/**
 * `tsx make-pglite-template.ts OUT`: opens a new in-memory PGlite database, applies every migration and writes the
 * data directory as a tar to OUT. Run by pglite-template.ts in a child process (so a jest worker never blocks on it
 * mid-test and the dump holds nothing but the migrated schema).
 *
 * PGlite works in the `template1` database; initdb also made `template0` and `postgres`, which nothing here uses and
 * which were half of the tar (7.3 MB each of 30 MB). They are dropped, and a CHECKPOINT written, before the dump:
 * every test server loads the tar into PGlite's in-memory file system, so half the tar is half that work (about 0.1 s
 * of CPU a test server; docs/testing.md "Third round").
 */
import fs from "node:fs";
import { openDatabase } from "../../src/db/database";
import { applyMigrations } from "../../src/db/migrations";

async function main(out: string): Promise<void> {
  const db = await openDatabase({ dataDir: "memory://" });
  try {
    await applyMigrations(db);
    // One statement a call: DROP DATABASE cannot run inside the implicit transaction of a multi-statement script,
    // and template0 refuses it while it is marked a template (PostgreSQL docs, "Template Databases").
    for (const statement of ["DROP DATABASE postgres", "ALTER DATABASE template0 IS_TEMPLATE false", "DROP DATABASE template0", "CHECKPOINT"]) {
      await db.executeScript(statement);
    }
    const dump = await db.dumpDataDir!();
    fs.writeFileSync(out, Buffer.from(await dump.arrayBuffer()));
  } finally {
    await db.close();
  }
}

const out = process.argv[2];
if (!out) throw new Error("usage: make-pglite-template.ts OUT");
main(out).catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});

/**
 * `tsx make-pglite-template.ts OUT`: opens a new in-memory PGlite database, applies every migration and writes the
 * data directory as a tar to OUT. Run by pglite-template.ts in a child process (so a jest worker never blocks on it
 * mid-test and the dump holds nothing but the migrated schema).
 */
import fs from "node:fs";
import { openDatabase } from "../../src/db/database";
import { applyMigrations } from "../../src/db/migrations";

async function main(out: string): Promise<void> {
  const db = await openDatabase({ dataDir: "memory://" });
  try {
    await applyMigrations(db);
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

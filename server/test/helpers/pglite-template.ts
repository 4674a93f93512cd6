/**
 * The migrated, empty PGlite database every in-memory test server starts from (issue 27): initdb and the migration
 * history run once, in a child process, and the result is dumped to a tar in the OS temp directory; each test
 * server then loads that tar (`Config.databaseTemplate`, db/database.ts) instead of running initdb and every
 * migration again. A start from the template costs about half of a fresh one on this machine (docs/testing.md).
 *
 * The file's name carries a hash of every migration (name and SQL) and of the PGlite version, so a new or edited
 * migration or a PGlite upgrade makes a new template; jest workers that race to make the same one each write their
 * own temporary file and rename it into place (atomic). The server still runs `applyMigrations` on the loaded
 * database, which then only checks the recorded checksums.
 */
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const REPO_ROOT = path.resolve(__dirname, "..", "..", "..");
const MIGRATIONS = path.join(REPO_ROOT, "server", "prisma", "migrations");
const MAKER = path.join(__dirname, "make-pglite-template.ts");

let cached: string | undefined;

/** Hash of what the template's content depends on: the migrations (names and SQL) and the PGlite version. */
function templateKey(): string {
  const hash = crypto.createHash("sha256");
  // The server pins PGlite to an exact version: its dependency entry names the data format.
  const server = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "server", "package.json"), "utf8")) as { dependencies: Record<string, string> };
  hash.update(`pglite ${server.dependencies["@electric-sql/pglite"]}\n`);
  for (const name of fs.readdirSync(MIGRATIONS).sort()) {
    const file = path.join(MIGRATIONS, name, "migration.sql");
    if (fs.existsSync(file)) hash.update(`${name}\n`).update(fs.readFileSync(file));
  }
  hash.update(fs.readFileSync(MAKER));
  return hash.digest("hex").slice(0, 16);
}

/**
 * Path of the template tar for the current migrations, made first when missing (a few seconds, once per machine
 * and migration set).
 * @throws Error with the child's output when the template cannot be made (a migration fails on PGlite).
 */
export function pgliteTemplate(): string {
  if (cached && fs.existsSync(cached)) return cached;
  const file = path.join(os.tmpdir(), `stageline-pglite-template-${templateKey()}.tar`);
  if (!fs.existsSync(file)) {
    const partial = `${file}.${process.pid}.${crypto.randomBytes(4).toString("hex")}`;
    const tsx = require.resolve("tsx/cli", { paths: [REPO_ROOT] });
    try {
      execFileSync(process.execPath, [tsx, MAKER, partial], { cwd: REPO_ROOT, stdio: "pipe", env: { ...process.env, NODE_OPTIONS: "" } });
      fs.renameSync(partial, file);
    } catch (err) {
      fs.rmSync(partial, { force: true });
      const e = err as { stdout?: Buffer; stderr?: Buffer; message: string };
      throw new Error(`Making the PGlite test template failed: ${e.message}\n${e.stdout?.toString() ?? ""}${e.stderr?.toString() ?? ""}`);
    }
  }
  return (cached = file);
}

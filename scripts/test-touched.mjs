#!/usr/bin/env node
/**
 * `npm run test:touched [-- jest options]`: the inner loop (docs/testing.md). Runs the test files a change touches,
 * where "change" is every file that differs from `TEST_BASE` (default `main`): committed on this branch, staged,
 * modified or untracked. A file is touched by the change when
 *   - it is a changed test file;
 *   - it imports a changed file directly (a relative import, e.g. a test helper or a service a test calls);
 *   - its name starts with the first word of a changed source file's name (`services/items.ts`, `routes/items.ts`
 *     and `db/items.ts` touch `items-create.test.ts`, `items-list.test.ts`, ...; `webhook-dispatch.ts` touches
 *     `webhook-*.test.ts`).
 *   - it is the Markdown link check (test/docs/links.test.ts) and a Markdown file changed.
 * A changed source file that touches no test that way, and any change to `shared/src`, falls back to jest's own
 * `--findRelatedTests` (every test that reaches the file through imports, which for server code is most of the
 * server tests); a change to the migrations, the Prisma schema, package.json or the jest/TypeScript configuration
 * runs every test. Changes to the n8n package and its tests (n8n/, test/n8n, test/e2e/n8n-*) select nothing here:
 * a line says to run `npm run test:n8n` (they need the n8n package's own install).
 * `TEST_CHANGED_FILES="server/src/routes/tasks.ts ..."` names the changed files instead (a dry run with `--listTests`).
 * This is a fast first check, not a substitute for `npm test` (CI runs everything on both databases).
 */
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const base = process.env.TEST_BASE || "main";
const git = (...args) => execFileSync("git", args, { cwd: root, encoding: "utf8" }).split("\n").filter(Boolean);

// TEST_CHANGED_FILES="a.ts b.ts" names the changed files instead of git (what would run if these changed?).
const changed = new Set(
  process.env.TEST_CHANGED_FILES
    ? process.env.TEST_CHANGED_FILES.split(/\s+/).filter(Boolean)
    : [...git("diff", "--name-only", `${base}...HEAD`), ...git("diff", "--name-only", "HEAD"), ...git("ls-files", "--others", "--exclude-standard")],
);
const jestEnv = { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --experimental-vm-modules`.trim() };
const jestBin = path.join(root, "node_modules", "jest", "bin", "jest.js");
const allTests = execFileSync(process.execPath, [jestBin, "--listTests"], { cwd: root, encoding: "utf8", env: jestEnv })
  .split("\n")
  .filter(Boolean)
  .map((file) => path.relative(root, file));

/** Relative imports of a file, resolved to repository paths (`.ts`, `.js` or `index.ts`). */
function importsOf(file) {
  const text = fs.readFileSync(path.join(root, file), "utf8");
  const out = [];
  for (const [, spec] of text.matchAll(/(?:from|import|require)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)) {
    const bare = path.join(path.dirname(file), spec);
    const hit = [bare, `${bare}.ts`, `${bare}.js`, path.join(bare, "index.ts")].find((p) => fs.existsSync(path.join(root, p)) && fs.statSync(path.join(root, p)).isFile());
    if (hit) out.push(hit);
  }
  return out;
}

const everything = /^(server\/prisma\/|jest\.config|tsconfig[^/]*\.json$|package(-lock)?\.json$)/;
const wide = /^shared\/src\//;
const selected = new Set();
const related = [];
const all = [...changed].filter((file) => everything.test(file));
if (all.length) {
  console.log(`test:touched: ${all.join(", ")} changed: running every test.`);
  const run = spawnSync(process.execPath, [jestBin, ...process.argv.slice(2)], { cwd: root, stdio: "inherit", env: jestEnv });
  process.exit(run.status ?? 1);
}
// The n8n nodes and their tests are not in `npm test`'s jest run (they need the n8n package's own install)
const n8nFiles = /^(n8n\/|test\/n8n\/|test\/e2e\/n8n-|jest\.n8n\.config|tsconfig\.n8n-test)/;
const n8nChanged = [...changed].filter((file) => n8nFiles.test(file) && !file.endsWith(".md"));
if (n8nChanged.length) console.log(`test:touched: ${n8nChanged.length} n8n file(s) changed (${n8nChanged.slice(0, 3).join(", ")}${n8nChanged.length > 3 ? ", ..." : ""}): their tests run with \`npm run test:n8n\`.`);
for (const file of changed) {
  if (n8nChanged.includes(file)) continue;
  // Markdown: the link check of README.md, docs/ and the packages' READMEs (a moved heading breaks links into it)
  if (file.endsWith(".md")) {
    selected.add("test/docs/links.test.ts");
    continue;
  }
  if (!/\.(ts|js|mjs|cjs|json|prisma|sql)$/.test(file) || !fs.existsSync(path.join(root, file))) continue;
  if (allTests.includes(file)) {
    selected.add(file);
    continue;
  }
  if (wide.test(file)) {
    related.push(file);
    continue;
  }
  const word = path.basename(file).replace(/\.[^.]+$/, "").split(/[-.]/)[0];
  const hits = allTests.filter((test) => importsOf(test).includes(file) || (word.length > 2 && path.basename(test).startsWith(word)));
  if (hits.length) hits.forEach((test) => selected.add(test));
  else if (/\.(ts|js)$/.test(file)) related.push(file);
}

if (!selected.size && !related.length) {
  console.log(`test:touched: no test is touched by the changes since ${base}.`);
  process.exit(0);
}
const args = [...process.argv.slice(2)];
if (related.length) args.push("--findRelatedTests", ...related, ...selected);
else args.push("--runTestsByPath", ...selected);
console.log(`test:touched: ${selected.size} test file(s) by name or direct import${related.length ? `, plus every test reaching ${related.join(", ")}` : ""}`);
const run = spawnSync(process.execPath, [jestBin, ...args], { cwd: root, stdio: "inherit", env: jestEnv });
process.exit(run.status ?? 1);

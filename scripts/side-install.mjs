#!/usr/bin/env node
/**
 * `node scripts/side-install.mjs <folder> [--force]`: brings a side install (a folder of the repository with its own
 * package.json and package-lock.json, outside the root workspaces) in line with its lockfile, by `npm ci` in that
 * folder when its node_modules is missing or stale; otherwise it does nothing (under a second). The side installs
 * (docs/testing.md "Side installs"): `n8n` (the n8n package: n8n-workflow, n8n-core, @n8n/node-cli; about 800
 * packages) and `connector/cli` (the Zapier CLI, zapier-platform-cli; about 800 packages). They keep the root
 * `npm install` lean; each is made by the command that needs it (`npm run test:n8n`, `npm run lint:n8n`,
 * `npm run test:zapier-cli`, the connector's `validate`, `zapier` and `package`) and by `.ci/run`.
 * Stale: a package the lockfile lists (optional ones of other platforms aside) is absent from, or has another version
 * in, npm's record of the installed tree (<folder>/node_modules/.package-lock.json). `--force`: always `npm ci` (CI).
 * The root install comes first (the n8n nodes import @stageline/shared through its workspace link there).
 * Exit code: npm's (2 for a folder that is not a side install).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const folder = process.argv.slice(2).find((arg) => !arg.startsWith('--'));
const dir = folder ? path.resolve(root, folder) : '';
if (!folder || !fs.existsSync(path.join(dir, 'package-lock.json'))) {
  console.error(`side-install: ${folder ?? '(no folder)'} has no package-lock.json (usage: node scripts/side-install.mjs n8n|connector/cli [--force])`);
  process.exit(2);
}

/** Why the install must be (re)made, or null when it matches the lockfile. */
function staleReason() {
  const installed = path.join(dir, 'node_modules', '.package-lock.json');
  if (!fs.existsSync(installed)) return `${folder}/node_modules is not installed`;
  const want = JSON.parse(fs.readFileSync(path.join(dir, 'package-lock.json'), 'utf8')).packages;
  const have = JSON.parse(fs.readFileSync(installed, 'utf8')).packages;
  for (const [key, entry] of Object.entries(want)) {
    if (!key || entry.optional) continue;
    if (have[key]?.version !== entry.version) return `${folder}/${key} ${have[key]?.version ?? 'missing'}, its package-lock.json wants ${entry.version}`;
  }
  return null;
}

const reason = process.argv.includes('--force') ? 'forced' : staleReason();
if (reason) {
  console.log(`side install (${reason}): npm ci in ${folder}/`);
  const result = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'inherit' });
  process.exit(result.status ?? 1);
}

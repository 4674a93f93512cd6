#!/usr/bin/env node
/**
 * `node scripts/side-install.mjs <folder> [--force]`: brings a side install (a folder of the repository with its own
 * package.json and package-lock.json, outside the root workspaces) in line with its lockfile, by `npm ci` in that
 * folder when its node_modules is missing or stale; otherwise it does nothing (under a second). The side installs
 * (docs/testing.md "Side installs"): `n8n` (the n8n package: n8n-workflow, n8n-core, @n8n/node-cli; about 800
 * packages) and `connector/cli` (the Zapier CLI, zapier-platform-cli; about 800 packages). They keep the root
 * `npm install` lean; each is made by the command that needs it (`npm run test:n8n`, `npm run lint:n8n`,
 * `npm run test:zapier-cli`, the connector's `validate`, `zapier` and `package`) and by `.ci/run`.
 * Stale: the folder's package-lock.json is not the one its node_modules was installed from (a successful `npm ci`
 * here writes the lockfile's SHA-256 to <folder>/node_modules/.stageline-lockfile-sha256). `--force`: always
 * `npm ci` (CI).
 * The root install comes first (the n8n nodes import @stageline/shared through its workspace link there).
 * Exit code: npm's (2 for a folder that is not a side install).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
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

/** Where a successful `npm ci` records the SHA-256 of the lockfile it installed. */
const stamp = path.join(dir, 'node_modules', '.stageline-lockfile-sha256');
const lockHash = () => createHash('sha256').update(fs.readFileSync(path.join(dir, 'package-lock.json'))).digest('hex');

/** Why the install must be (re)made, or null when it was made from the lockfile as it is now. */
function staleReason() {
  if (!fs.existsSync(path.join(dir, 'node_modules'))) return `${folder}/node_modules is not installed`;
  if (!fs.existsSync(stamp)) return `${folder}/node_modules was not made by this script`;
  if (fs.readFileSync(stamp, 'utf8').trim() !== lockHash()) return `${folder}/package-lock.json changed since its install`;
  return null;
}

const reason = process.argv.includes('--force') ? 'forced' : staleReason();
if (reason) {
  console.log(`side install (${reason}): npm ci in ${folder}/`);
  const result = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'inherit' });
  if (result.status === 0) fs.writeFileSync(stamp, `${lockHash()}\n`);
  process.exit(result.status ?? 1);
}

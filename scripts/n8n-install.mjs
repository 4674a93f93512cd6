#!/usr/bin/env node
/**
 * `node scripts/n8n-install.mjs [--force]`: brings the n8n package's own install (n8n/node_modules: n8n-workflow,
 * n8n-core for the engine tests, @n8n/node-cli for build and lint; about 800 packages) in line with
 * n8n/package-lock.json, by `npm ci` in n8n/ when it is missing or stale; otherwise it does nothing (under a second).
 * Stale: a package the lockfile lists (optional ones of other platforms aside) is absent from, or has another version
 * in, npm's record of the installed tree (n8n/node_modules/.package-lock.json). `--force`: always `npm ci` (CI).
 * The root install (`npm install` at the repository root) comes first: the nodes import @stageline/shared through
 * its workspace link there. docs/testing.md "The n8n install". Exit code: npm's.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'n8n');

/** Why the install must be (re)made, or null when it matches the lockfile. */
function staleReason() {
  const installed = path.join(dir, 'node_modules', '.package-lock.json');
  if (!fs.existsSync(installed)) return 'n8n/node_modules is not installed';
  const want = JSON.parse(fs.readFileSync(path.join(dir, 'package-lock.json'), 'utf8')).packages;
  const have = JSON.parse(fs.readFileSync(installed, 'utf8')).packages;
  for (const [key, entry] of Object.entries(want)) {
    if (!key || entry.optional) continue;
    if (have[key]?.version !== entry.version) return `n8n/${key} ${have[key]?.version ?? 'missing'}, n8n/package-lock.json wants ${entry.version}`;
  }
  return null;
}

const reason = process.argv.includes('--force') ? 'forced' : staleReason();
if (reason) {
  console.log(`n8n install (${reason}): npm ci in n8n/`);
  const result = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'inherit' });
  process.exit(result.status ?? 1);
}

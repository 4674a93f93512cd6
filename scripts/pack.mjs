#!/usr/bin/env node
/**
 * `npm run pack` (`node scripts/pack.mjs [--out DIR] [--only client,mcp,n8n,zapier]`): builds every installable
 * artefact of the repository into one folder, by default `dist/artefacts/` at the root (git-ignored), and nothing into
 * the source tree (docs/releasing.md):
 *
 * | part     | artefact                                                       | made by                                             |
 * |----------|----------------------------------------------------------------|-----------------------------------------------------|
 * | `client` | `stageline-client-<version>.tgz` (@stageline/client)           | `npm run build -w @stageline/client`, `npm pack`    |
 * | `mcp`    | `stageline-mcp-<version>.tgz` (@stageline/mcp, `stageline-mcp`) | `npm run bundle -w @stageline/mcp`, `npm pack`      |
 * | `n8n`    | `n8n-nodes-stageline-<version>.tgz`                            | side install `n8n/`, `n8n-node build`, `npm pack`   |
 * | `zapier` | `stageline-zapier-<version>.zip` and `...-source.zip`          | `tsc -b connector`, `connector/scripts/package.js` (build.zip and source.zip, in a temporary folder) |
 *
 * plus `SHA256SUMS` (the format `sha256sum -c` reads) over every file in the folder. Each `npm pack` runs with
 * `--pack-destination` (npm writes into the working directory otherwise) and `--ignore-scripts` (the build ran just
 * before; a `prepack` would print into npm's JSON answer). The builds write only their git-ignored outputs
 * (`client/dist`, `mcp/dist-bundle`, `n8n/dist`, `connector/dist`); the script compares `git status --porcelain
 * --ignored` before and after and fails when anything else appeared (a tarball or zip in a package folder, an
 * untracked or changed file). Earlier artefacts in the folder (`*.tgz`, `*.zip`, `SHA256SUMS`) are removed first, so it
 * holds what this run made and nothing older.
 *
 * Prints one line per artefact (`<file> <bytes> bytes`). Exit code 1 (with the tool's own output) when a step fails,
 * 2 for bad arguments.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PARTS = ['client', 'mcp', 'n8n', 'zapier'];
/** Git-ignored build outputs the builds may create (`git status --ignored` entries, relative to the root). */
const BUILD_OUTPUTS = /^(client\/dist|mcp\/dist-bundle|n8n\/dist|connector\/dist|shared\/dist|server\/dist|dist)\/$|\.tsbuildinfo$/;

function usage(message) {
  console.error(`pack: ${message}\nusage: node scripts/pack.mjs [--out DIR] [--only ${PARTS.join(',')}]`);
  process.exit(2);
}

/** `{ out, parts }` from argv: `--out DIR` (default dist/artefacts), `--only a,b` (default every part). */
function parseArgs(argv) {
  let out = path.join(ROOT, 'dist', 'artefacts');
  let parts = PARTS;
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (flag === '--out' && value) out = path.resolve(value);
    else if (flag === '--only' && value) parts = value.split(',');
    else usage(`unknown or incomplete argument ${flag}`);
    i += 1;
  }
  const unknown = parts.filter((part) => !PARTS.includes(part));
  if (unknown.length > 0 || parts.length === 0) usage(`unknown part ${unknown.join(',') || '(none)'}`);
  return { out, parts };
}

/** The environment without npm's per-run settings (`npm run pack --json` would otherwise reach every child npm). */
function cleanEnv() {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_')));
}

/** Runs a command with its output shown; throws (exit status in the message) when it fails. */
function run(command, args, cwd = ROOT) {
  execFileSync(command, args, { cwd, stdio: 'inherit', env: cleanEnv() });
}

/** `npm pack` of the package in `dir` into `out`; returns the tarball's file name. */
function npmPack(dir, out) {
  const json = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', out], {
    cwd: dir,
    env: cleanEnv(),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return JSON.parse(json)[0].filename;
}

/** `git status --porcelain --ignored` lines of the repository, or null outside a git checkout. */
function gitStatus() {
  try {
    const text = execFileSync('git', ['status', '--porcelain', '--ignored', '--untracked-files=normal'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return new Set(text.split('\n').filter(Boolean));
  } catch {
    return null;
  }
}

/** What the run left in the source tree besides build outputs and the artefact folder (empty when clean). */
function strayChanges(before, after, out) {
  const outRelative = `${path.relative(ROOT, out).split(path.sep).join('/')}/`;
  return [...after]
    .filter((line) => !before.has(line))
    .filter((line) => {
      const file = line.slice(3);
      if (!line.startsWith('!! ')) return true;
      return !BUILD_OUTPUTS.test(file) && !`${outRelative}`.startsWith(file) && !file.startsWith(outRelative);
    });
}

/** Builds the parts; returns the artefacts' file names. */
function build(parts, out) {
  const files = [];
  if (parts.includes('client')) {
    run('npm', ['run', 'build', '-w', '@stageline/client']);
    files.push(npmPack(path.join(ROOT, 'client'), out));
  }
  if (parts.includes('mcp')) {
    run('npm', ['run', 'bundle', '-w', '@stageline/mcp']);
    files.push(npmPack(path.join(ROOT, 'mcp'), out));
  }
  if (parts.includes('n8n')) {
    run(process.execPath, [path.join(ROOT, 'scripts', 'side-install.mjs'), 'n8n']);
    run('npm', ['run', 'build', '--prefix', 'n8n']);
    files.push(npmPack(path.join(ROOT, 'n8n'), out));
  }
  if (parts.includes('zapier')) {
    const connectorDir = path.join(ROOT, 'connector');
    const { version } = JSON.parse(fs.readFileSync(path.join(connectorDir, 'package.json'), 'utf8'));
    run(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', 'connector']);
    const zips = fs.mkdtempSync(path.join(os.tmpdir(), 'stageline-pack-zapier-'));
    try {
      run(process.execPath, [path.join(connectorDir, 'scripts', 'package.js'), '--out', zips], connectorDir);
      for (const [from, to] of [['build.zip', `stageline-zapier-${version}.zip`], ['source.zip', `stageline-zapier-${version}-source.zip`]]) {
        fs.copyFileSync(path.join(zips, from), path.join(out, to));
        files.push(to);
      }
    } finally {
      fs.rmSync(zips, { recursive: true, force: true });
    }
  }
  return files;
}

function main() {
  const { out, parts } = parseArgs(process.argv.slice(2));
  const before = gitStatus();
  fs.mkdirSync(out, { recursive: true });
  for (const name of fs.readdirSync(out)) {
    if (/\.(tgz|zip)$/.test(name) || name === 'SHA256SUMS') fs.rmSync(path.join(out, name));
  }
  const files = build(parts, out);
  const sums = fs
    .readdirSync(out)
    .filter((name) => /\.(tgz|zip)$/.test(name))
    .sort()
    .map((name) => `${createHash('sha256').update(fs.readFileSync(path.join(out, name))).digest('hex')}  ${name}\n`);
  fs.writeFileSync(path.join(out, 'SHA256SUMS'), sums.join(''));
  for (const name of files) console.log(`${path.join(out, name)} ${fs.statSync(path.join(out, name)).size} bytes`);
  if (before) {
    const stray = strayChanges(before, gitStatus(), out);
    if (stray.length > 0) {
      console.error(`pack: the build wrote into the source tree (git status):\n${stray.join('\n')}`);
      process.exit(1);
    }
  }
}

try {
  main();
} catch (err) {
  console.error(`npm run pack failed: ${err && err.message ? err.message : err}`);
  process.exit(1);
}

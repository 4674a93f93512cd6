#!/usr/bin/env node
/**
 * `node scripts/publish-dry-run.mjs [DIR]` (CI, `.ci/run` stage `publish-dry-run`; docs/releasing.md): runs
 * `npm publish --dry-run` of every npm tarball `npm run pack` wrote into DIR (default dist/artefacts), the exact files
 * a release publishes, and checks what each holds. Per tarball it prints one line
 * (`<name>@<version>: <packed> bytes packed, <unpacked> bytes unpacked, <n> files`) and fails (exit 1) when:
 *
 * - npm's dry run fails (a bad manifest, a name or version npm refuses);
 * - the version is already on the registry with other contents: the package changed without a version bump
 *   (npm answers "You cannot publish over the previously published versions"; the tarball's sha512 is then compared
 *   with the registry's `dist.integrity`, and an identical tarball passes as "already published");
 * - the tarball holds no README.md, or holds a file a user does not need: tests, sources (`src/`), TypeScript build
 *   info, an `.env` or `.npmrc`.
 *
 * The dry run reads the package's document from the registry (`GET registry.npmjs.org/<name>`: a 404 while the name is
 * unpublished) and uploads nothing. Without network it still passes, after npm's retries (about 70 s a tarball).
 * Exit code 2 when DIR holds no tarball.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Paths inside a tarball (`package/` stripped) that a user of the package never needs. */
const NOT_FOR_USERS = /(^|\/)(test|tests|__tests__|src)\/|\.(test|spec)\.[cm]?[jt]s$|\.tsbuildinfo$|(^|\/)\.(env|npmrc)$/;

/** The environment without npm's per-run settings of a calling `npm run`. */
function cleanEnv() {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_')));
}

/** Runs npm with `args` in `cwd`; returns `{ status, stdout, stderr }`. */
function npm(args, cwd) {
  const result = spawnSync('npm', args, { cwd, env: cleanEnv(), encoding: 'utf8' });
  if (result.error) throw result.error;
  return result;
}

/**
 * Checks one tarball (`file`, in `dir`); returns the problems found (empty when it may be published).
 * Prints its summary line.
 */
function check(dir, file) {
  const problems = [];
  const dry = npm(['publish', '--dry-run', '--json', `./${file}`], dir);
  if (dry.status !== 0) {
    if (!/previously published version/.test(dry.stderr)) return [`${file}: npm publish --dry-run failed:\n${dry.stderr.trim()}`];
    const local = `sha512-${createHash('sha512').update(fs.readFileSync(path.join(dir, file))).digest('base64')}`;
    const manifest = spawnSync('tar', ['-xzOf', file, 'package/package.json'], { cwd: dir, encoding: 'utf8' });
    if (manifest.status !== 0) return [`${file}: no package/package.json in the tarball: ${manifest.stderr.trim()}`];
    const { name, version } = JSON.parse(manifest.stdout);
    const spec = `${name}@${version}`;
    const published = npm(['view', spec, 'dist.integrity'], dir);
    if (published.status === 0 && published.stdout.trim() === local) {
      console.log(`${spec}: already published, identical tarball (nothing to publish)`);
      return [];
    }
    return [`${spec}: this version is already on the registry with other contents: bump the version (docs/releasing.md)`];
  }
  const answer = JSON.parse(dry.stdout);
  const report = answer.id ? answer : Object.values(answer)[0];
  const paths = report.files.map((entry) => entry.path);
  console.log(`${report.id}: ${report.size} bytes packed, ${report.unpackedSize} bytes unpacked, ${paths.length} files`);
  if (!paths.includes('README.md')) problems.push(`${report.id}: no README.md in the tarball`);
  const extra = paths.filter((entry) => NOT_FOR_USERS.test(entry));
  if (extra.length > 0) problems.push(`${report.id}: files a user does not need (package.json "files"): ${extra.join(', ')}`);
  return problems;
}

const dir = path.resolve(process.argv[2] ?? path.join(ROOT, 'dist', 'artefacts'));
const tarballs = fs.existsSync(dir) ? fs.readdirSync(dir).filter((name) => name.endsWith('.tgz')).sort() : [];
if (tarballs.length === 0) {
  console.error(`publish-dry-run: no .tgz in ${dir} (run npm run pack first)`);
  process.exit(2);
}
const problems = tarballs.flatMap((file) => check(dir, file));
if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}

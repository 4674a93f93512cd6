#!/usr/bin/env node
/**
 * `npm run package` (in connector/): writes build/build.zip (and build/source.zip), the zip Zapier runs, which
 * works on its own: unpacked in an empty directory with only Node 22, its `zapierwrapper.js` handler loads the app.
 *
 * Why not plain `zapier-platform build`: the connector depends on the workspace package `@stageline/shared`, which is
 * not on the registry, so the CLI's `npm install` in its temporary copy fails (E404); and with `--skip-dep-install`
 * the dependencies are hoisted to the repository root, outside the app directory. So this script prepares a
 * self-contained app directory (a temporary "stage") and lets the CLI's own build zip and self-test it there:
 *
 * 1. esbuild bundles the compiled app (root index.js -> dist/, with `@stageline/shared` and zod) into one
 *    stage/index.js; `zapier-platform-core` stays external (the wrapper and Zapier's runtime load it by name).
 * 2. stage/package.json names `zapier-platform-core` (the exact version of connector/package.json) as the only
 *    dependency; stage/node_modules receives `zapier-platform-core` and its production dependencies, copied from
 *    the repository's installed tree (the versions package-lock.json pins; nothing is downloaded).
 * 3. The app definition is validated with core's own `validate` command (the schema check the CLI runs).
 * 4. `zapier-platform build --skip-dep-install --skip-validation` (the CLI's side install connector/cli, made first
 *    when missing) runs in the stage (schema validated in step 3;
 *    the remote style check needs zapier.com): it writes definition.json and zapierwrapper.js, zips what esbuild
 *    finds reachable plus `.zapierapprc` `includeInBuild`, and tests the unpacked zip. The zips are copied to
 *    connector/build/ and the stage is removed.
 *
 * Usage: `node scripts/package.js [--out DIR]` (after `tsc -b`; `npm run package` does both).
 * Exits non-zero with the tool's own output when a step fails.
 */
'use strict';

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const CONNECTOR_DIR = path.resolve(__dirname, '..');
const REPO_ROOT = path.resolve(CONNECTOR_DIR, '..');
/** Where the zips go: `--out DIR` (tests use a temporary directory), else connector/build. */
const outFlag = process.argv.indexOf('--out');
const BUILD_DIR = outFlag > 0 && process.argv[outFlag + 1] ? path.resolve(process.argv[outFlag + 1]) : path.join(CONNECTOR_DIR, 'build');
const CORE = 'zapier-platform-core';

/** Directory of an installed package `name` as Node would resolve it from `fromDir` (walking up node_modules). */
function resolvePackageDir(name, fromDir) {
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (fs.existsSync(path.join(candidate, 'package.json'))) return fs.realpathSync(candidate);
    if (path.dirname(dir) === dir) throw new Error(`${name} (needed by ${fromDir}) is not installed: run npm install at the repository root.`);
  }
}

/**
 * Copies `name` and its production dependencies (dependencies + installed optionalDependencies, transitively) from
 * the repository's node_modules into stage/node_modules, keeping each package's place in the tree (a nested
 * `a/node_modules/b` stays nested), so Node resolves exactly the versions it resolves in the repository.
 */
function copyProductionTree(name, stageDir) {
  const seen = new Set();
  const queue = [resolvePackageDir(name, CONNECTOR_DIR)];
  while (queue.length > 0) {
    const dir = queue.shift();
    if (seen.has(dir)) continue;
    seen.add(dir);
    const relative = path.relative(REPO_ROOT, dir);
    if (!relative.startsWith(`node_modules${path.sep}`)) throw new Error(`Unexpected install location ${dir}: expected under ${REPO_ROOT}/node_modules.`);
    const nested = path.join(dir, 'node_modules');
    fs.cpSync(dir, path.join(stageDir, relative), {
      recursive: true,
      dereference: true,
      filter: (source) => source !== nested && !source.startsWith(`${nested}${path.sep}`),
    });
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    for (const dep of Object.keys(manifest.dependencies ?? {})) queue.push(resolvePackageDir(dep, dir));
    for (const dep of Object.keys(manifest.optionalDependencies ?? {})) {
      try {
        queue.push(resolvePackageDir(dep, dir));
      } catch {
        // an optional dependency that is not installed (another platform's) is not needed
      }
    }
  }
  return seen.size;
}

/** Runs a command in `cwd`, its output shown; throws (with the exit status) when it fails. */
function run(command, args, cwd, env = {}) {
  execFileSync(command, args, { cwd, stdio: 'inherit', env: { ...process.env, DISABLE_ZAPIER_ANALYTICS: '1', ...env } });
}

async function main() {
  const connectorPackage = JSON.parse(fs.readFileSync(path.join(CONNECTOR_DIR, 'package.json'), 'utf8'));
  const coreVersion = connectorPackage.dependencies[CORE];
  const stage = fs.mkdtempSync(path.join(fs.realpathSync(os.tmpdir()), 'stageline-zapier-stage-'));
  try {
    // 1. The app as one file.
    const esbuild = require('esbuild');
    await esbuild.build({
      entryPoints: [path.join(CONNECTOR_DIR, 'index.js')],
      outfile: path.join(stage, 'index.js'),
      bundle: true,
      platform: 'node',
      target: 'node22',
      format: 'cjs',
      external: [CORE],
      logLevel: 'warning',
      legalComments: 'inline',
    });

    // 2. package.json and the runtime dependencies.
    const stagePackage = {
      name: connectorPackage.name,
      version: connectorPackage.version,
      description: connectorPackage.description,
      private: true,
      main: 'index.js',
      dependencies: { [CORE]: coreVersion },
    };
    fs.writeFileSync(path.join(stage, 'package.json'), `${JSON.stringify(stagePackage, null, 2)}\n`);
    fs.copyFileSync(path.join(CONNECTOR_DIR, '.zapierapprc'), path.join(stage, '.zapierapprc'));
    // source.zip (written by the CLI beside build.zip) then holds the bundled app, not the dependencies.
    fs.writeFileSync(path.join(stage, '.gitignore'), 'node_modules/\nbuild/\n');
    const installed = JSON.parse(fs.readFileSync(path.join(resolvePackageDir(CORE, CONNECTOR_DIR), 'package.json'), 'utf8')).version;
    if (installed !== coreVersion) throw new Error(`${CORE} ${installed} is installed but package.json pins ${coreVersion}: run npm install.`);
    const packages = copyProductionTree(CORE, stage);

    // 3. Schema validation, as `zapier-platform validate` does it locally.
    const validate =
      "require('zapier-platform-core').createAppHandler(require('./index.js'))({command:'validate',calledFromCli:true},{},(e,r)=>{" +
      "if(e){console.error(e);process.exit(1)}const errs=r.results;if(errs.length){console.error(JSON.stringify(errs,null,2));process.exit(1)}})";
    run(process.execPath, ['-e', validate], stage);

    // 4. The CLI's own build, zip and build test. The CLI is a side install (connector/cli, its own
    // package-lock.json; docs/testing.md "Side installs"), made here when missing or stale.
    run(process.execPath, [path.join(REPO_ROOT, 'scripts', 'side-install.mjs'), 'connector/cli'], REPO_ROOT);
    const cli = require.resolve('zapier-platform-cli/src/bin/run', { paths: [path.join(CONNECTOR_DIR, 'cli')] });
    run(process.execPath, [cli, 'build', '--skip-dep-install', '--skip-validation'], stage);
    fs.mkdirSync(BUILD_DIR, { recursive: true });
    for (const name of ['build.zip', 'source.zip']) fs.copyFileSync(path.join(stage, 'build', name), path.join(BUILD_DIR, name));
    const size = fs.statSync(path.join(BUILD_DIR, 'build.zip')).size;
    console.log(`Wrote ${path.join(BUILD_DIR, 'build.zip')} (${(size / 1024).toFixed(0)} KiB; app bundle plus ${packages} runtime packages).`);
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(`npm run package failed: ${err && err.message ? err.message : err}`);
  process.exit(1);
});

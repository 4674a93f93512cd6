/**
 * The TypeScript transform of every jest project: ts-jest (transpile only, `isolatedModules`), loaded on the first
 * file whose transform is not in jest's cache. ts-jest's own cache key needs its configuration, and building that
 * loads the TypeScript compiler (about 0.2 s of CPU), in every worker, and jest starts a fresh worker for almost
 * every file (jest.base.js `workerIdleMemoryLimit`); with the cache warm most workers never transform a file.
 * The key here covers what ts-jest's covers in this mode (its configuration: the tsconfig files and the transform
 * options, also part of jest's `configString`; the file's text and path; `instrument`; ESM support) plus the
 * versions of ts-jest and TypeScript and this file's own source. With `isolatedModules` (tsconfig.test.json) a file's
 * output depends on no other file's content. docs/testing.md "Third round".
 */
const crypto = require("node:crypto");
const fs = require("node:fs");
const path = require("node:path");

/**
 * A digest of what decides the output besides the file itself, read once per worker: this file's own source, the
 * ts-jest options, every `tsconfig*.json` at the repository root (the one the options name and whatever it extends:
 * all of them live there), and the versions of ts-jest and TypeScript. This file sits at the root (`__dirname`), which
 * is every jest project's `rootDir` (jest.base.js).
 */
function configDigest(tsJestOptions) {
  const hash = crypto.createHash("sha256").update(fs.readFileSync(__filename)).update("\0");
  hash.update(JSON.stringify(tsJestOptions ?? null)).update("\0");
  const tsconfigs = fs.readdirSync(__dirname).filter((name) => /^tsconfig.*\.json$/.test(name)).sort();
  for (const file of [...tsconfigs, "node_modules/ts-jest/package.json", "node_modules/typescript/package.json"]) {
    hash.update(file).update("\0").update(fs.readFileSync(path.join(__dirname, file))).update("\0");
  }
  return hash.digest("hex");
}

module.exports = {
  /** @param {object} tsJestOptions the ts-jest options given in the jest configuration. */
  createTransformer(tsJestOptions) {
    let tsJest;
    let digest;
    const transformer = () => (tsJest ??= require("ts-jest").default.createTransformer(tsJestOptions));
    return {
      /** sha256 (hex) of the configuration digest, the jest configuration, the transform flags, the path and the text. */
      getCacheKey(source, filename, options) {
        return crypto
          .createHash("sha256")
          .update((digest ??= configDigest(tsJestOptions)))
          .update("\0")
          .update(options.configString)
          .update(`\0instrument:${Boolean(options.instrument)}\0esm:${Boolean(options.supportsStaticESM)}\0`)
          .update(filename)
          .update("\0")
          .update(source)
          .digest("hex");
      },
      /** ts-jest's transform of `source` ({ code, map }), loading ts-jest on the first call. */
      process(source, filename, options) {
        return transformer().process(source, filename, options);
      },
    };
  },
};

/**
 * The TypeScript transform of every jest project: ts-jest (transpile only, `isolatedModules`), loaded on the first
 * file whose transform is not in jest's cache. ts-jest's own cache key needs its configuration, and building that
 * loads the TypeScript compiler (about 0.2 s of CPU), in every worker, and jest starts a fresh worker for almost
 * every file (jest.base.js `workerIdleMemoryLimit`); with the cache warm most workers never transform a file.
 * The key here covers what ts-jest's covers in this mode (its configuration: the tsconfig files, and the transform
 * options through jest's `configString`; the file's text and path; `instrument`; ESM support) plus the versions of
 * ts-jest and TypeScript. docs/testing.md "Third round".
 */
const crypto = require("node:crypto");
const fs = require("node:fs");
const path = require("node:path");

/**
 * A digest of what decides the output besides the file itself: the tsconfig named in the options (and the base it
 * extends) and the versions of ts-jest and TypeScript. Read once per worker.
 */
function configDigest(tsJestOptions) {
  const tsconfig = String(tsJestOptions?.tsconfig ?? "tsconfig.json").replace("<rootDir>", __dirname);
  const files = [path.resolve(__dirname, tsconfig), "tsconfig.base.json", "node_modules/ts-jest/package.json", "node_modules/typescript/package.json"];
  const hash = crypto.createHash("sha256").update("stageline-jest-transform 1\0");
  for (const file of files) hash.update(file).update("\0").update(fs.readFileSync(path.resolve(__dirname, file))).update("\0");
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

/**
 * What the jest configurations share: `jest.config.js` (`npm test`: every test but those needing a side install),
 * `jest.n8n.config.js` (`npm run test:n8n`: the n8n nodes' tests, against the n8n package's own install in
 * n8n/node_modules) and `jest.zapier-cli.config.js` (`npm run test:zapier-cli`: the connector's packaged zip, built
 * with the Zapier CLI of connector/cli/node_modules). docs/testing.md: what each project tests and how to run a part of it.
 */
const os = require('node:os');
const path = require('node:path');

const rootDir = __dirname;
/** `@stageline/shared`, `@stageline/mcp` and `@stageline/client` map to their sources, so no build is needed. */
const stagelineSources = {
  '^@stageline/shared$': '<rootDir>/shared/src/index.ts',
  '^@stageline/mcp$': '<rootDir>/mcp/src/index.ts',
  '^@stageline/client$': '<rootDir>/client/src/index.ts',
};
/**
 * The options of every jest project: ts-jest (CommonJS, no type check: `npm run typecheck:tests` does that), through
 * jest.transform.js, which loads ts-jest only when a file's transform is not in jest's cache.
 */
const base = {
  // n8n/dist holds a copy of n8n/package.json (the build n8n loads): one package name, one place for jest
  modulePathIgnorePatterns: ['<rootDir>/n8n/dist/'],
  testEnvironment: 'node',
  rootDir,
  moduleNameMapper: stagelineSources,
  transform: { '^.+\\.ts$': ['<rootDir>/jest.transform.js', { tsconfig: '<rootDir>/tsconfig.test.json' }] },
};
/** The top-level options of both configurations. */
const runner = {
  testTimeout: 30000,
  // One worker more than there are cores (jest's default is one fewer: in band on two cores): a test file spends much
  // of its time waiting on its servers, child processes and timers, so a third file fills the gaps. Measured on the
  // 2-core machine, a whole warm PGlite pass: 430 s with two workers, 366 s with three (docs/testing.md, issue 27).
  // JEST_MAX_WORKERS overrides it (1 = in band, for debugging).
  maxWorkers: Number(process.env.JEST_MAX_WORKERS) || Math.max(3, os.cpus().length + 1),
  // A worker's memory keeps growing file after file (PGlite's WebAssembly memories: about 10 GB RSS after 50 files was
  // seen; three workers at 8.1 + 5.7 + 8.5 GB got one OOM-killed on this 24 GB machine). jest compares this limit with
  // the worker's V8 heapUsed after each file (jest-worker processChild.js), which does not count WebAssembly memory,
  // so a limit of gigabytes never fired: 200 MB of heap, which a worker passes after almost any file that started a
  // test server, replaces such a worker by a fresh process, and its PGlite memory goes with it.
  workerIdleMemoryLimit: '200MB',
};
/** The n8n nodes' tests (their own install, n8n/node_modules): test/n8n and the two n8n end-to-end stories. */
const n8nTests = {
  units: ['<rootDir>/test/n8n/**/*.test.ts'],
  e2e: ['<rootDir>/test/e2e/n8n-*.test.ts'],
  /** The same files as path patterns (regular expressions), for `testPathIgnorePatterns` of `npm test`. */
  ignore: ['<rootDir>/test/n8n/', '<rootDir>/test/e2e/n8n-[^/]*\\.test\\.ts$'],
  installDir: path.join(rootDir, 'n8n', 'node_modules'),
};

/** The connector's packaged-zip test, which runs the Zapier CLI's build (its side install, connector/cli). */
const zapierCliTests = {
  match: ['<rootDir>/connector/test/package.test.ts'],
  /** The same file as a path pattern, for `testPathIgnorePatterns` of `npm test`. */
  ignore: ['<rootDir>/connector/test/package\\.test\\.ts$'],
  installDir: path.join(rootDir, 'connector', 'cli', 'node_modules'),
};

module.exports = { base, runner, n8nTests, zapierCliTests };

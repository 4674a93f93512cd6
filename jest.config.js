/**
 * One jest run for the whole repository: unit tests of every package plus the end-to-end suite.
 * TypeScript runs through ts-jest (CommonJS); `@stageline/shared`, `@stageline/mcp` and `@stageline/client` map to
 * their sources so no build is needed (the stdio test of mcp/ spawns the built bin).
 * docs/testing.md: what each project tests, which need a database, how to run a part of it.
 */
const os = require('node:os');
const shared = {
  '^@stageline/shared$': '<rootDir>/shared/src/index.ts',
  '^@stageline/mcp$': '<rootDir>/mcp/src/index.ts',
  '^@stageline/client$': '<rootDir>/client/src/index.ts',
};
const base = {
  // n8n/dist holds a copy of n8n/package.json (the build n8n loads): one package name, one place for jest
  modulePathIgnorePatterns: ['<rootDir>/n8n/dist/'],
  preset: 'ts-jest',
  testEnvironment: 'node',
  rootDir: __dirname,
  moduleNameMapper: shared,
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.test.json' }] },
};
/** n8n-core and n8n-workflow are dev dependencies of the n8n package only (n8n/node_modules): its tests find them there. */
const n8nModules = { modulePaths: ['<rootDir>/n8n/node_modules'] };
module.exports = {
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
  projects: [
    { ...base, displayName: 'shared', testMatch: ['<rootDir>/shared/src/**/*.test.ts'] },
    { ...base, displayName: 'server', testMatch: ['<rootDir>/server/src/**/*.test.ts', '<rootDir>/server/test/**/*.test.ts'] },
    { ...base, displayName: 'connector', testMatch: ['<rootDir>/connector/src/**/*.test.ts', '<rootDir>/connector/test/**/*.test.ts'] },
    { ...base, displayName: 'client', testMatch: ['<rootDir>/client/test/**/*.test.ts'] },
    { ...base, displayName: 'mcp', testMatch: ['<rootDir>/mcp/test/**/*.test.ts'] },
    { ...base, ...n8nModules, displayName: 'n8n', testMatch: ['<rootDir>/test/n8n/**/*.test.ts'] },
    { ...base, ...n8nModules, displayName: 'e2e', testMatch: ['<rootDir>/test/**/*.test.ts'], testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/n8n/', '<rootDir>/test/docs/'] },
    // The Markdown of README.md, docs/ and the packages: no dead relative link or anchor (reads files only, under a second)
    { ...base, displayName: 'docs', testMatch: ['<rootDir>/test/docs/**/*.test.ts'] },
  ],
};

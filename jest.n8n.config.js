/**
 * `npm run test:n8n`: the n8n nodes' tests (units, the n8n-core engine against a scripted API, the live files against
 * a real server, the two end-to-end stories). They need the n8n package's own install (n8n/node_modules: n8n-workflow,
 * n8n-core, @n8n/node-cli), which `npm run test:n8n` makes first (`npm ci` in n8n/) and `npm test` does without.
 * Server code and test helpers (server/src, server/test/helpers) resolve from the root install as in `npm test`.
 * docs/testing.md "Side installs".
 */
const fs = require('node:fs');
const { base, runner, n8nTests } = require('./jest.base');

if (!fs.existsSync(`${n8nTests.installDir}/n8n-core`)) {
  throw new Error('n8n/node_modules is not installed: run `npm run test:n8n` (it installs n8n/ first), or `npm ci --prefix n8n`');
}
// n8n-core, n8n-workflow and luxon are in n8n/node_modules: the test files (test/n8n, test/e2e) find them there, as
// the nodes (n8n/nodes) do by Node's own lookup, so both load the one copy of n8n-workflow (its error classes are
// compared with instanceof).
const n8n = { ...base, modulePaths: [n8nTests.installDir], transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.n8n-test.json' }] } };

module.exports = {
  ...runner,
  projects: [
    { ...n8n, displayName: 'n8n', testMatch: n8nTests.units },
    { ...n8n, displayName: 'e2e-n8n', testMatch: n8nTests.e2e },
  ],
};

/**
 * `npm test`: one jest run for the whole repository: unit tests of every package plus the end-to-end suite, but for
 * the tests that need a side install (docs/testing.md "Side installs"): the n8n nodes' tests need the n8n package's
 * own install (n8n-workflow, n8n-core) and run with `npm run test:n8n` (jest.n8n.config.js); the connector's
 * packaged-zip test needs the Zapier CLI (connector/cli) and runs with `npm run test:zapier-cli`
 * (jest.zapier-cli.config.js). CI runs all three (.ci/run).
 * docs/testing.md: what each project tests, which need a database, how to run a part of it.
 */
const { base, runner, n8nTests, zapierCliTests } = require('./jest.base');

module.exports = {
  ...runner,
  projects: [
    { ...base, displayName: 'shared', testMatch: ['<rootDir>/shared/src/**/*.test.ts'] },
    { ...base, displayName: 'server', testMatch: ['<rootDir>/server/src/**/*.test.ts', '<rootDir>/server/test/**/*.test.ts'] },
    {
      ...base,
      displayName: 'connector',
      testMatch: ['<rootDir>/connector/src/**/*.test.ts', '<rootDir>/connector/test/**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', ...zapierCliTests.ignore],
    },
    { ...base, displayName: 'client', testMatch: ['<rootDir>/client/test/**/*.test.ts'] },
    { ...base, displayName: 'mcp', testMatch: ['<rootDir>/mcp/test/**/*.test.ts'] },
    {
      ...base,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/docs/', ...n8nTests.ignore],
    },
    // The Markdown of README.md, docs/ and the packages: no dead relative link or anchor (reads files only, under a second)
    { ...base, displayName: 'docs', testMatch: ['<rootDir>/test/docs/**/*.test.ts'] },
  ],
};

/**
 * `npm run test:zapier-cli`: the connector's packaged-zip test (connector/test/package.test.ts: `npm run package`,
 * the zip unpacked and run by Node 22 against a real server). It runs the Zapier CLI's build, which is a side install
 * (connector/cli, its own package-lock.json) that `npm run test:zapier-cli` makes first and `npm test` does without.
 * docs/testing.md "Side installs".
 */
const fs = require('node:fs');
const path = require('node:path');
const { base, runner, zapierCliTests } = require('./jest.base');

if (!fs.existsSync(path.join(zapierCliTests.installDir, 'zapier-platform-cli'))) {
  throw new Error('connector/cli/node_modules is not installed: run `npm run test:zapier-cli` (it installs connector/cli first)');
}

module.exports = {
  ...runner,
  projects: [{ ...base, displayName: 'connector-package', testMatch: zapierCliTests.match }],
};

/**
 * Jest for the connector alone (`npm test` here, and `zapier-platform test`). The root jest.config.js runs the same
 * files as its "connector" project. TypeScript through ts-jest (CommonJS); `@stageline/shared` maps to its source.
 */
module.exports = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  rootDir: __dirname,
  testMatch: ['<rootDir>/test/**/*.test.ts', '<rootDir>/src/**/*.test.ts'],
  moduleNameMapper: { '^@stageline/shared$': '<rootDir>/../shared/src/index.ts' },
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/../tsconfig.test.json' }] },
  testTimeout: 30000,
};

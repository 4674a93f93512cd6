/**
 * One jest run for the whole repository: unit tests of every package plus the end-to-end suite.
 * TypeScript runs through ts-jest (CommonJS); `@stageline/shared` maps to its source so no build is needed.
 */
const shared = { '^@stageline/shared$': '<rootDir>/shared/src/index.ts' };
const base = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  rootDir: __dirname,
  moduleNameMapper: shared,
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.test.json' }] },
};
module.exports = {
  testTimeout: 30000,
  projects: [
    { ...base, displayName: 'shared', testMatch: ['<rootDir>/shared/src/**/*.test.ts'] },
    { ...base, displayName: 'server', testMatch: ['<rootDir>/server/src/**/*.test.ts', '<rootDir>/server/test/**/*.test.ts'] },
    { ...base, displayName: 'connector', testMatch: ['<rootDir>/connector/src/**/*.test.ts', '<rootDir>/connector/test/**/*.test.ts'] },
    { ...base, displayName: 'client', testMatch: ['<rootDir>/client/test/**/*.test.ts'] },
    { ...base, displayName: 'e2e', testMatch: ['<rootDir>/test/**/*.test.ts'] },
  ],
};

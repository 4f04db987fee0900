// The browser tests (test/browser/**/*.browser-spec.ts): a jest project of their own, run by
// `npm run test:browser` and never by plain `npm test` (they need Chromium: /usr/bin/chromium
// or CHROMIUM_PATH). Same compilation and test database set-up as the e2e project.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS config file
const base = require('./jest.config.cjs');
const e2e = base.projects.find((project) => project.displayName === 'e2e');
module.exports = {
  projects: [{ ...e2e, displayName: 'browser', testMatch: ['<rootDir>/test/browser/**/*.browser-spec.ts'] }],
  reporters: base.reporters,
  // One browser at a time: the machine's cores are shared.
  maxWorkers: 1,
  testTimeout: 60000,
};

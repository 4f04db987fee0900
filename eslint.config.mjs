// Lint: typescript-eslint's recommended rules plus the architecture rules of
// docs/architecture.md that a machine can check (see
// docs/decisions/contexts-are-named-through-package-json-imports-and-a-lint-rule-keeps-them-apart.md).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import contextBoundaries from './eslint-rules/context-boundaries.mjs';
import writePath from './eslint-rules/write-path.mjs';
import entitlementWrites from './eslint-rules/entitlement-writes.mjs';

// SQL runs only in repositories (and migrations, and the platform's query helper): see
// docs/decisions/sql-only-in-repositories-one-write-path-through-sql.md.
const SQL_OUTSIDE_REPOSITORIES = [
  {
    selector: "CallExpression[callee.property.name='query']",
    message: 'SQL belongs in a *.repository.ts file (run it through the platform Sql helper).',
  },
  {
    selector: "CallExpression[callee.property.name='createQueryBuilder']",
    message: 'SQL belongs in a *.repository.ts file (run it through the platform Sql helper).',
  },
];
// Domain time comes from the one Clock (the test clock moves it); `new Date(x)` of a known instant is fine.
const NEW_DATE_WITHOUT_ARGUMENTS = [
  {
    selector: "NewExpression[callee.name='Date'][arguments.length=0]",
    message: 'Use Clock.now() / Clock.nowMs(), never the wall clock, in libs (performance.now() for durations).',
  },
];
const SQL_HOMES = ['**/*.repository.ts', '**/migrations/**', 'libs/platform/src/database/**'];
const CLOCK_HOME = ['libs/platform/src/clock/**'];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.data/**', 'coverage/**', 'test/support/*.cjs', '.openapi/**', 'apps/console/src/api/operator.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module' },
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
      'no-empty': ['error', { allowEmptyCatch: true }],
      // Deliberate: the storable-text checks match NUL and control characters.
      'no-control-regex': 'off',
    },
  },
  {
    files: ['bench/**/*.mjs', '*.cjs', '*.mjs', 'apps/console/*.mjs'],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        performance: 'readonly',
        fetch: 'readonly',
        AbortController: 'readonly',
        require: 'readonly',
        module: 'writable',
        __dirname: 'readonly',
      },
    },
  },
  // Architecture: SQL only in repositories; wall time only in the Clock. (One block per file set:
  // a later block's no-restricted-syntax replaces an earlier one's, it does not add to it.)
  {
    files: ['libs/**/*.ts'],
    ignores: [...SQL_HOMES, ...CLOCK_HOME],
    rules: { 'no-restricted-syntax': ['error', ...SQL_OUTSIDE_REPOSITORIES, ...NEW_DATE_WITHOUT_ARGUMENTS] },
  },
  {
    files: ['libs/**/*.repository.ts', 'libs/**/migrations/**', 'libs/platform/src/database/**'],
    ignores: CLOCK_HOME,
    rules: { 'no-restricted-syntax': ['error', ...NEW_DATE_WITHOUT_ARGUMENTS] },
  },
  {
    files: CLOCK_HOME,
    rules: { 'no-restricted-syntax': ['error', ...SQL_OUTSIDE_REPOSITORIES] },
  },
  {
    files: ['apps/**/*.ts'],
    ignores: SQL_HOMES,
    rules: { 'no-restricted-syntax': ['error', ...SQL_OUTSIDE_REPOSITORIES] },
  },
  {
    files: ['libs/**/*.ts'],
    ignores: CLOCK_HOME,
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'Use Clock.nowMs(), never the wall clock, in libs (performance.now() for durations).' },
      ],
    },
  },
  // Boundaries: a context imports another only through its index, by name (#platform, #keys, ...).
  { plugins: { contexts: { rules: { 'import-by-index': contextBoundaries } } } },
  {
    files: ['libs/**/*.ts', 'apps/**/*.ts', 'bench/**/*.mjs'],
    rules: { 'contexts/import-by-index': ['error', { root: import.meta.dirname }] },
  },
  {
    files: ['test/**/*.ts'],
    rules: { 'contexts/import-by-index': ['error', { testFiles: true, root: import.meta.dirname }] },
  },
  // One write path: the tenant scope first (or a bare projectId first in repositories and services);
  // no EntityManager outside the platform's database layer.
  { plugins: { 'write-path': writePath } },
  {
    files: ['libs/**/*.ts', 'apps/**/*.ts'],
    rules: { 'write-path/scope-first': 'error', 'write-path/no-exported-repository': 'error' },
  },
  {
    files: ['libs/**/*.repository.ts', 'libs/**/*.service.ts'],
    rules: { 'write-path/project-id-first': 'error' },
  },
  {
    files: ['libs/**/*.ts', 'apps/**/*.ts'],
    ignores: ['**/migrations/**', 'libs/platform/src/database/**'],
    rules: { 'write-path/no-entity-manager': 'error' },
  },
  // One entitlement write path: outside libs/entitlements an entitlement changes only through EntitlementWriter.apply.
  { plugins: { 'entitlement-writes': entitlementWrites } },
  {
    files: ['libs/**/*.ts', 'apps/**/*.ts'],
    rules: { 'entitlement-writes/only-through-writer': ['error', { root: import.meta.dirname }] },
  },
);

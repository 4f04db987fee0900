import type { Linter } from 'eslint';
import contextBoundaries from '../../eslint-rules/context-boundaries.mjs';
import { lintWith } from '../support/lint-rule.js';

/**
 * The lint rule that keeps contexts apart (eslint.config.mjs, `contexts/import-by-index`): a
 * context imports another only through its index, by name.
 */
/** Relative specifiers are built from parts so that no tool rewriting imports mistakes these samples for imports. */
const UP2 = '../'.repeat(2);
const UP3 = '../'.repeat(3);

function lint(file: string, code: string, options: Record<string, unknown>[] = []): string[] {
  const plugins = { contexts: { rules: { 'import-by-index': contextBoundaries } } };
  const rules = { 'contexts/import-by-index': ['error', ...options] as Linter.RuleEntry };
  return lintWith(plugins, rules, code, file).map((m) => `${m.line}: ${m.message}`);
}

describe('lint: contexts import each other only through their index', () => {
  const file = 'libs/telemetry/src/storage/some.service.ts';

  it("accepts another context's index by name and the context's own files by relative path", () => {
    const code = [
      "import { Clock } from '#platform';",
      "import { Keys } from '#keys';",
      "import { Local } from '../buffer/local.js';",
      "import pg from 'pg';",
    ].join('\n');
    expect(lint(file, code)).toEqual([]);
  });

  it('rejects a deep name into another context', () => {
    expect(lint(file, "import { RailSubscriptionsRepository } from '#rails/src/model/rail-subscriptions.repository.js';")).toEqual([
      expect.stringMatching(/^1: '#rails\/src\/model\/rail-subscriptions\.repository\.js' reaches inside context 'rails': import '#rails'/),
    ]);
  });

  it('rejects a relative path into another context, its index or its internals', () => {
    const code = [
      `import { Clock } from '${UP3}platform/src/index.js';`,
      `export { arrayParamShape } from '${UP3}platform/src/database/binary-arrays.js';`,
      `const later = () => import('${UP3}keys/src/domain/keys.repository.js');`,
    ].join('\n');
    expect(lint(file, code)).toEqual([
      expect.stringMatching(/^1: .* reaches into context 'platform' by path: import '#platform'/),
      expect.stringMatching(/^2: .* reaches into context 'platform' by path/),
      expect.stringMatching(/^3: .* reaches into context 'keys' by path/),
    ]);
  });

  it('rejects a context importing its own index by name', () => {
    expect(lint(file, "import { TelemetryModule } from '#telemetry';")).toEqual([expect.stringMatching(/^1: '#telemetry' is this file's own context/)]);
  });

  it('holds in apps/ too; tests import an index by name but may reach internals by path', () => {
    expect(lint('apps/api/src/main.ts', `import { KeysModule } from '${UP3}libs/keys/src/index.js';`)).toHaveLength(1);
    const testFile = 'test/unit/some.spec.ts';
    expect(lint(testFile, `import { Clock } from '${UP2}libs/platform/src/index.js';`, [{ testFiles: true }])).toHaveLength(1);
    expect(lint(testFile, `import { encodeBatch } from '${UP2}libs/telemetry/src/storage/event-insert.sql.js';`, [{ testFiles: true }])).toEqual([]);
  });
});

import { resolve } from 'node:path';
import { Linter } from 'eslint';
import tseslint from 'typescript-eslint';

/** The repository root: lint rules resolve contexts and files against it. */
export const REPO_ROOT = resolve(__dirname, '../..');

/**
 * Runs one of the repository's lint plugins over a TypeScript sample as if it were the file
 * `file` (relative to the repository root), with exactly the rules given, and returns the
 * messages it reports.
 */
export function lintWith(plugins: Linter.Config['plugins'], rules: Linter.RulesRecord, code: string, file: string): Linter.LintMessage[] {
  const linter = new Linter({ cwd: REPO_ROOT });
  const config: Linter.Config[] = [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser as Linter.Parser }, plugins, rules }];
  return linter.verify(code, config, { filename: resolve(REPO_ROOT, file) });
}

// Runs after `npm run build` (npm's postbuild): copies the Redoc bundle that `/docs` loads from
// the @redocly/cli development dependency into dist/docs/, so the production image serves the
// API reference without any UI package installed. Fails the build when the bundle is missing.
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import process from 'node:process';

const source = 'node_modules/@redocly/cli/lib/chunks/redoc.standalone.js';
const target = 'dist/docs/redoc.standalone.js';
if (!existsSync(source)) {
  process.stderr.write(`${source} is missing: is @redocly/cli installed at the version package.json pins?\n`);
  process.exit(1);
}
mkdirSync('dist/docs', { recursive: true });
copyFileSync(source, target);

// The repository explains itself: its documents, deployment files and code comments restate the
// rules they rely on or point at the repository's own docs (docs/api.md, docs/rails.md,
// docs/webhooks.md, docs/operations.md), never at specification files kept elsewhere, and they
// do not repeat statements the code no longer makes true. The decision records under
// docs/decisions/ are read too.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { listeningLogFields } from '#platform';

const ROOT = path.resolve(__dirname, '..', '..');
const SELF = path.relative(ROOT, __filename);
const SKIPPED = new Set(['node_modules', 'dist', 'coverage', 'screenshots', '__snapshots__']);
const CODE = /\.(ts|tsx|mts|cts|js|mjs|cjs)$/;

function filesUnder(relative: string, accept: (name: string) => boolean): string[] {
  const full = path.join(ROOT, relative);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return accept(full) ? [relative] : [];
  return readdirSync(full)
    .filter((name) => !name.startsWith('.') && !SKIPPED.has(name))
    .flatMap((name) => filesUnder(path.join(relative, name), accept));
}

/** README, docs (decisions included, in either layout), deployment files, and every source file under libs/ apps/ test/ bench/. */
function scannedFiles(): string[] {
  const any = () => true;
  return [
    ...['README.md', 'Dockerfile', 'docker-compose.yml', '.env.example', 'redocly.yaml', '.ci/run'].flatMap((file) => filesUnder(file, any)),
    ...filesUnder('docs', (name) => name.endsWith('.md')),
    ...filesUnder('deploy', any),
    ...['libs', 'apps', 'test', 'bench', 'scripts'].flatMap((dir) => filesUnder(dir, (name) => CODE.test(name) && !name.endsWith('.d.ts'))),
  ].filter((file) => file !== SELF);
}

/** Citations of specification files that are not in the repository. */
const OUTSIDE = [
  /\.\.\/shared\b/,
  /\/work\/shared\b/,
  // Names of specification files kept elsewhere; one the repository has a document of its own by (docs/subscriptions.md) is its own.
  new RegExp(
    `(?<![\\w/-])(?:${['read-api', 'store-rails', 'webhooks-out', 'operator-api', 'api-v1', 'runtime', 'subscriptions', 'console']
      .filter((name) => !existsSync(path.join(ROOT, 'docs', `${name}.md`)))
      .join('|')})\\.md\\b`,
  ),
  /\bthe contract\b/i,
  /\bcontract order\b/i,
];

/** Statements the code no longer makes true. */
const STALE = [
  /Swagger UI\)?,? (?:stays|is) at `?\/docs/i, // /docs is a Redoc page
  /\(Swagger UI\)/,
  /not published under a licen[cs]e/i, // LICENSE is MIT
  /\bmigration Job\b/, // every pod's `migrate` init container migrates
  /OpenAPI at \/docs\)/, // off in production unless DOCS_ENABLED
];

/** The text with line breaks and comment markers folded, so a phrase split over lines still matches. */
function folded(text: string): string {
  return text.replace(/\s*\n\s*(?:\/\/+|\*|#)?\s*/g, ' ');
}

function findings(patterns: RegExp[], text: string): string[] {
  const flat = folded(text);
  return patterns.flatMap((pattern) => {
    const global = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`);
    return [...flat.matchAll(global)].map((m) => flat.slice(Math.max(0, m.index - 30), m.index + m[0].length + 30).trim());
  });
}

describe('the repository is self-contained and current', () => {
  const files = scannedFiles();

  it('reads the README, the docs (with the decision records), the deployment files and the code', () => {
    expect(files).toEqual(
      expect.arrayContaining(['README.md', 'Dockerfile', 'docker-compose.yml', 'docs/api.md', 'docs/operations.md', 'apps/api/src/main.ts']),
    );
    expect(files.some((file) => file.startsWith('deploy/'))).toBe(true);
    expect(files.some((file) => file.startsWith('docs/decisions/'))).toBe(true);
  });

  it('cites no specification file kept outside the repository', () => {
    const problems = files.flatMap((file) => findings(OUTSIDE, readFileSync(path.join(ROOT, file), 'utf8')).map((hit) => `${file}: …${hit}…`));
    expect(problems).toEqual([]);
  });

  it('repeats no statement the code no longer makes true', () => {
    const problems = files.flatMap((file) => findings(STALE, readFileSync(path.join(ROOT, file), 'utf8')).map((hit) => `${file}: …${hit}…`));
    expect(problems).toEqual([]);
  });

  it('finds each phrase, also across lines and comment markers', () => {
    expect(findings(OUTSIDE, 'see store-rails.md')).toHaveLength(1);
    expect(findings(OUTSIDE, '// as the\n// contract says')).toHaveLength(1);
    expect(findings(OUTSIDE, '# (../shared/contracts/x.md)')).toHaveLength(1);
    expect(findings(OUTSIDE, 'docs/rails.md and docs/api.md')).toEqual([]);
    expect(findings(STALE, ' * The service is not published\n * under a licence')).toHaveLength(1);
    expect(findings(STALE, 'the migration\n# Job runs first')).toHaveLength(1);
    expect(findings(STALE, 'the page stays at one call')).toEqual([]);
  });
});

describe('the "API listening" line', () => {
  it('names the docs path only when /docs is served', () => {
    expect(listeningLogFields({ port: 3000, host: '0.0.0.0', docsEnabled: true }, 9464)).toEqual({
      port: 3000,
      host: '0.0.0.0',
      docs: '/docs',
      metricsPort: 9464,
    });
    expect(listeningLogFields({ port: 3000, host: '0.0.0.0', docsEnabled: false }, null)).toEqual({ port: 3000, host: '0.0.0.0', metricsPort: null });
  });
});

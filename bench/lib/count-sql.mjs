// Preloaded (`node --import ./bench/lib/count-sql.mjs`) into a process a bench measures by its
// statements: counts every statement the process sends through pg (BEGIN and COMMIT
// included), whatever sends it (a request, a job, a sweep that finds nothing). A counter and
// one comparison per statement, so the CPU figures of the same process stay honest.
// GET /__bench/statements answers { statements } (answered here, before the app).
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.join(process.cwd(), 'package.json'));
const pg = require('pg');
let statements = 0;

const query = pg.Client.prototype.query;
pg.Client.prototype.query = function countedQuery(config, values, callback) {
  statements++;
  return query.call(this, config, values, callback);
};

const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function countedEmit(event, req, res) {
  if (event === 'request' && req.url === '/__bench/statements') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ statements }));
    return true;
  }
  return emit.apply(this, arguments);
};

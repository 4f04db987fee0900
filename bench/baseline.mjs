// The bare baseline of `npm run bench`: a minimal node:http server that does what the API
// cannot avoid for POST /v1/events — read the body, JSON.parse it, and run the same single
// multi-row INSERT (the very statement builder the API uses, from dist/; the plain INSERT the
// API sends for batches of new events, as the bench's are) on a pool of the same size — and
// nothing else: no framework, no auth, no validation, no rate limit, no group commit.
//
// Reads (READS_FILE, written by bench/run.mjs): for each read route, the SQL statements the
// API itself issued for one warmed-up request of that route (recorded by
// bench/capture-sql.mjs, same text and parameters, same order, one connection when they
// form a transaction), then the API's recorded answer serialised again. That is the floor
// for the same queries over node:http. With `x-bench-prepared: 1` the statements the API
// prepared run prepared here too, by the API's names.
//
//   PORT=4000 DATABASE_URL=postgres://... [READS_FILE=reads.json] node bench/baseline.mjs
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { buildInsertStatement, dedupeAndSort } from '../dist/libs/telemetry/src/storage/event-insert.sql.js';

const port = Number(process.env.PORT ?? 4000);
const host = process.env.HOST ?? '127.0.0.1';
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_SIZE ?? 10) });
const PROJECT_ID = process.env.BASELINE_PROJECT_ID ?? 'proj_baseline';
const APP_ID = 'app_baseline';
const DAY_MS = 86_400_000;
const LIMIT = 1024 * 1024;

const json = (value) => (value === undefined || value === null ? null : JSON.stringify(value));

function rowsOf(body, receivedAtMs) {
  return body.events.map((e) => ({
    eventId: e.eventId ?? `srv_${randomUUID()}`,
    clientDay: Math.floor((e.timestamp ?? receivedAtMs) / DAY_MS),
    name: e.name,
    timestampMs: e.timestamp ?? receivedAtMs,
    clientTimestampMs: e.timestamp ?? null,
    level: e.level ?? null,
    fingerprint: typeof e.properties?.fingerprint === 'string' ? e.properties.fingerprint : null,
    propertiesJson: json(e.properties),
    tagsJson: json(e.tags),
    categoryTagsJson: json(e.categoryTags),
    developerUserId: e.developerUserId ?? null,
    anonymousId: e.anonymousId ?? null,
    serviceCustomerId: e.serviceCustomerId ?? null,
  }));
}

/** [{ method, prefix, statements: [{sql, params}], status, response }] */
const reads = process.env.READS_FILE ? JSON.parse(readFileSync(process.env.READS_FILE, 'utf8')) : [];
const BEGIN = /^\s*(BEGIN|START TRANSACTION)/i;

/**
 * The statement as plain text (the goal's baseline: pg's default, parsed and planned on every
 * call), or, with `prepared`, by the name the API gave it (parsed and planned once per connection).
 */
const queryOf = (s, prepared) => (prepared && s.name ? { name: s.name, text: s.sql } : s.sql);

async function runStatements(statements, prepared) {
  if (!statements.some((s) => BEGIN.test(s.sql))) {
    for (const s of statements) await pool.query(queryOf(s, prepared), s.params);
    return;
  }
  const client = await pool.connect();
  try {
    for (const s of statements) await client.query(queryOf(s, prepared), s.params);
  } finally {
    client.release();
  }
}

function serveRead(route, req, res) {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', async () => {
    try {
      if (chunks.length > 0) JSON.parse(Buffer.concat(chunks).toString('utf8'));
      await runStatements(route.statements, req.headers['x-bench-prepared'] === '1');
      const payload = JSON.stringify(route.response);
      res.writeHead(route.status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) }).end(payload);
    } catch (err) {
      res.writeHead(500, { 'Content-Type': 'text/plain' }).end(String(err?.message ?? err));
    }
  });
}

const server = http.createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/v1/events') {
    const route = reads.find((r) => r.method === req.method && req.url.startsWith(r.prefix));
    if (route) serveRead(route, req, res);
    else res.writeHead(404).end();
    return;
  }
  const chunks = [];
  let size = 0;
  req.on('data', (chunk) => {
    size += chunk.length;
    if (size > LIMIT) req.destroy();
    else chunks.push(chunk);
  });
  req.on('end', async () => {
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const receivedAtMs = Date.now();
      const rows = dedupeAndSort(rowsOf(body, receivedAtMs));
      const statement = buildInsertStatement(
        { projectId: PROJECT_ID, env: 'sandbox', appId: APP_ID, receivedAtMs, sdkName: body.sdk?.name ?? null, sdkVersion: body.sdk?.version ?? null },
        rows,
        { firstDelivery: true },
      );
      await pool.query(statement.sql, statement.params);
      const payload = JSON.stringify({ object: 'list', received: body.events.length, env: 'sandbox' });
      res.writeHead(202, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) }).end(payload);
    } catch (err) {
      res.writeHead(500, { 'Content-Type': 'text/plain' }).end(String(err?.message ?? err));
    }
  });
});

server.keepAliveTimeout = 65_000;
server.listen(port, host, () => process.stdout.write(`baseline listening on ${host}:${port}\n`));
process.once('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));

// The cost of the per-day rollups (errors, page views, first touches) that the event write
// keeps in its own statement, and the read latency of the rollups.
//
// A scratch database built by the real migrations (dist/apps/api/src/migrate.js). The
// statements are the API's own (FIRST_DELIVERY_EVENTS_WITH_ISSUES_SQL from dist/), fed by
// the bench's realistic web batches (bench/lib/event-bodies.mjs, every page view given the
// `url` the web client sends) validated and encoded as the API does, ROLLUP_BATCHES batches
// per statement as the group commit merges them. "without" is the same statement with the
// rollup CTEs cut out. Rounds alternate the two on one connection; measured: the backend's
// CPU per 100-event batch. Then ROLLUP_READS reads of each kind through the API's own
// rollup repository (dist/) on the filled tables: p99 wall time.
//
//   npm run build
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench:reporting-rollups
//
// Goals (ok / MISS): ingest CPU with rollups at most ROLLUP_MAX_RATIO (1.5) times without;
// each read's p99 at most ROLLUP_READ_P99_MS (25 ms).
// Environment: DATABASE_URL (required), ROLLUP_STATEMENTS (40 per round), ROLLUP_BATCHES (5),
// ROLLUP_ROUNDS (4), ROLLUP_READS (300), BENCH_KEEP_DB=1.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { ROOT, createScratchDatabase, cpuSeconds, requireDatabaseAndBuild, sh } from './lib/common.mjs';
import { bodySource } from './lib/event-bodies.mjs';
import { validateEvents } from '../dist/libs/telemetry/src/ingest/event-batch.validator.js';
import { concatEncodedRows, encodeBatch, insertStatementOf } from '../dist/libs/telemetry/src/storage/event-insert.sql.js';
import { ROLLUP_CTES } from '../dist/libs/telemetry/src/storage/event-rollups.sql.js';
import { EventRollupsRepository } from '../dist/libs/telemetry/src/rollups/event-rollups.repository.js';

const STATEMENTS = Number(process.env.ROLLUP_STATEMENTS ?? 40);
const BATCHES = Number(process.env.ROLLUP_BATCHES ?? 5);
const ROUNDS = Number(process.env.ROLLUP_ROUNDS ?? 4);
const READS = Number(process.env.ROLLUP_READS ?? 300);
const MAX_RATIO = Number(process.env.ROLLUP_MAX_RATIO ?? 1.5);
const READ_P99_MS = Number(process.env.ROLLUP_READ_P99_MS ?? 25);
const PROJECT = 'proj_rollups';
const HOST = 'shop.example.com';

const adminUrl = requireDatabaseAndBuild('npm run bench:reporting-rollups');
const log = (line = '') => process.stdout.write(`${line}\n`);
const migrate = (url) => sh(process.execPath, [path.join(ROOT, 'dist/apps/api/src/migrate.js')], ROOT, { DATABASE_URL: url, LOG_LEVEL: 'warn' });

/** A bench body with the `url` the web client puts on page views. */
function withUrls(text) {
  const body = JSON.parse(text);
  for (const e of body.events) if (e.name === 'page.viewed') e.properties.url = `https://${HOST}${e.properties.path}`;
  return body;
}

function statements(count, bodies, withRollups) {
  const receivedAtMs = Date.now();
  const meta = { projectId: PROJECT, env: 'sandbox', appId: 'app_rollups', receivedAtMs, sdkName: '@service/web', sdkVersion: '1.6.0' };
  return Array.from({ length: count }, () => {
    const parts = Array.from({ length: BATCHES }, () => encodeBatch(validateEvents(withUrls(bodies.next()), receivedAtMs, randomUUID).events, receivedAtMs));
    const s = insertStatementOf(meta, concatEncodedRows(parts), { firstDelivery: true });
    return withRollups ? s : { ...s, sql: s.sql.replace(`, ${ROLLUP_CTES}`, '') };
  });
}

async function cpuPerBatch(client, pid, batch) {
  const cpu0 = cpuSeconds(pid);
  for (const s of batch) await client.query(s.sql, s.params);
  return ((cpuSeconds(pid) - cpu0) * 1000) / (batch.length * BATCHES);
}

function p99(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))];
}

async function main() {
  const { url, drop } = await createScratchDatabase(adminUrl, 'rollups');
  const client = new pg.Client({ connectionString: url });
  let failed = false;
  try {
    await migrate(url);
    await client.connect();
    await client.query(`INSERT INTO projects (id, name, created_at) VALUES ($1, 'bench', now())`, [PROJECT]).catch(() => undefined);
    const pid = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    const bodies = bodySource();
    const sample = statements(1, bodies, true)[0];
    if (!sample.sql.includes('analytics_daily_hosts')) throw new Error('the bench batches do not take the rollup statement');
    // Warm-up: both statements once, rollup rows and events in place.
    await cpuPerBatch(client, pid, statements(10, bodies, true));
    await cpuPerBatch(client, pid, statements(10, bodies, false));
    const runs = { with: [], without: [] };
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ['with', 'without'] : ['without', 'with'];
      for (const kind of order) runs[kind].push(await cpuPerBatch(client, pid, statements(STATEMENTS, bodies, kind === 'with')));
    }
    const mean = (v) => v.reduce((a, b) => a + b, 0) / v.length;
    const ratio = mean(runs.with) / mean(runs.without);
    log(`ingest: PostgreSQL CPU per 100-event batch with rollups ${mean(runs.with).toFixed(2)} ms, without ${mean(runs.without).toFixed(2)} ms`);
    const ingestOk = ratio <= MAX_RATIO;
    failed ||= !ingestOk;
    log(`${ingestOk ? 'ok' : 'MISS'} ingest cost with rollups / without ${ratio.toFixed(2)} (goal <= ${MAX_RATIO})`);

    const sql = {
      one: async (text, params) => (await client.query(text, params)).rows[0] ?? null,
      rows: async (text, params) => (await client.query(text, params)).rows,
      run: async (text, params) => client.query(text, params),
    };
    const repo = new EventRollupsRepository(sql);
    const scope = { projectId: PROJECT, env: 'sandbox' };
    const fromDay = new Date(Date.now() - 29 * 86_400_000).toISOString().slice(0, 10);
    const { rows: fps } = await client.query(`SELECT DISTINCT fingerprint FROM error_daily_rollups WHERE project_id = $1 LIMIT 24`, [PROJECT]);
    const reads = {
      'error impact': (i) => repo.error(scope, fps[i % fps.length].fingerprint),
      'affected users': (i) => repo.affectedUsers(scope, fps[i % fps.length].fingerprint, 5000),
      'host metrics (30 days)': () => repo.views(scope, HOST, fromDay),
      'top pages (30 days)': () => repo.breakdown(scope, HOST, 'top_pages', fromDay, 25),
    };
    for (const [name, read] of Object.entries(reads)) {
      const samples = [];
      for (let i = 0; i < READS; i++) {
        const t0 = performance.now();
        await read(i);
        samples.push(performance.now() - t0);
      }
      const value = p99(samples);
      const ok = value <= READ_P99_MS;
      failed ||= !ok;
      log(`${ok ? 'ok' : 'MISS'} read p99 ${name} ${value.toFixed(2)} ms (goal <= ${READ_P99_MS} ms)`);
    }
    const { rows: counts } = await client.query(
      `SELECT (SELECT count(*) FROM events)::int AS events, (SELECT count(*) FROM analytics_daily_visitors)::int AS visitors, (SELECT count(*) FROM error_affected_users)::int AS users`,
    );
    log(`tables: ${counts[0].events} events, ${counts[0].visitors} visitor-days, ${counts[0].users} affected users`);
  } finally {
    await client.end().catch(() => {});
    await drop();
  }
  process.exitCode = failed ? 1 : 0;
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  process.exit(1);
});

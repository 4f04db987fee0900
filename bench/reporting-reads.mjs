// Revenue and crossmatch reads stay point reads as the ledger grows:
// `npm run build && node bench/reporting-reads.mjs` (npm run bench:reporting-reads).
//
// Starts the compiled API on a free loopback port against a scratch database on the
// DATABASE_URL server (dropped afterwards) and mints two projects with the card rail enabled
// and a secret key holding revenue:read and crossmatch:read. The revenue ledger of one is
// seeded small (BENCH_SMALL customers, 100), the other large (BENCH_LARGE, 200,000 paying
// customers, a year of daily values), straight into the ledger's tables. Then each route is
// called BENCH_CALLS times (2,000, one at a time after a warm-up) on both projects:
//   - GET /v1/revenue?granularity=day&days=90
//   - GET /v1/revenue/averages
//   - GET /v1/crossmatch?customerId=<a random customer of the project>
// Goal, one line per route (`ok` or `MISS`): the large project's p99 is at most 1.5 times the
// small one's (a point read does not grow with the ledger), both measured in this run.
//
// Environment: DATABASE_URL (required), BENCH_SMALL, BENCH_LARGE, BENCH_CALLS, LOG_LEVEL (warn).
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import {
  API_ENTRY as apiEntry,
  apiEnv,
  apiNodeArgs,
  call,
  createScratchDatabase,
  freePort,
  requireDatabaseAndBuild,
  startNode,
  stop,
  waitForHttp,
  withClient,
} from './lib/common.mjs';

const adminUrl = requireDatabaseAndBuild('node bench/reporting-reads.mjs');
const SMALL = Number(process.env.BENCH_SMALL ?? 100);
const LARGE = Number(process.env.BENCH_LARGE ?? 200_000);
const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const MAX_RATIO = 1.5;
const log = (line = '') => process.stdout.write(`${line}\n`);

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** A project with a web app, the card rail on, roomy reads and a sandbox secret key with the revenue and crossmatch scopes. */
async function mintProject(base, operatorToken, name) {
  const project = await call(base, 'POST', '/admin/v1/projects', operatorToken, { name });
  const app = await call(base, 'POST', `/admin/v1/projects/${project.id}/apps`, operatorToken, {
    name: 'bench web',
    platform: 'web',
    allowedOrigins: ['http://bench.localhost:3000'],
  });
  const secretId = app.keys.find((k) => k.kind === 'secret' && k.env === 'sandbox').id;
  const rotated = await call(base, 'POST', `/admin/v1/keys/${secretId}/rotate`, operatorToken, { scopes: ['revenue:read', 'crossmatch:read'] });
  await call(base, 'PUT', `/admin/v1/projects/${project.id}/rate-limits`, operatorToken, { reads: { sustained: 1e6, burst: 1e7 } });
  await call(base, 'PUT', `/admin/v1/projects/${project.id}/rails/card_payments`, operatorToken, {});
  return { projectId: project.id, key: rotated.key.key };
}

/** `count` paying customers on the card rail (one USD subscription each), their ledger rows, totals and a year of daily values. */
async function seedLedger(url, projectId, count) {
  await withClient(url, async (client) => {
    const p = [projectId, count];
    const id = `'cdcust_' || $1 || '_' || g`;
    await client.query(
      `INSERT INTO customers (id, project_id, env, created_at, updated_at) SELECT ${id}, $1, 'sandbox', now(), now() FROM generate_series(1, $2) g`,
      p,
    );
    await client.query(
      `INSERT INTO revenue_subscriptions (project_id, env, rail, subscription_id, customer_id, active, currency, monthly_minor, updated_at)
       SELECT $1, 'sandbox', 'card_payments', 'sub_' || g, ${id}, true, 'USD', 500 + g % 5000, now() FROM generate_series(1, $2) g`,
      p,
    );
    await client.query(
      `INSERT INTO revenue_customers (project_id, env, customer_id, rail, currency, monthly_minor, subscriptions)
       SELECT $1, 'sandbox', ${id}, 'card_payments', 'USD', 500 + g % 5000, 1 FROM generate_series(1, $2) g`,
      p,
    );
    await client.query(
      `INSERT INTO revenue_customer_totals (project_id, env, customer_id, currency, monthly_minor)
       SELECT $1, 'sandbox', ${id}, 'USD', 500 + g % 5000 FROM generate_series(1, $2) g`,
      p,
    );
    const mrr = (await client.query(`SELECT sum(500 + g % 5000) AS s FROM generate_series(1, $1) g`, [count])).rows[0].s;
    for (const [rail, currency] of [
      ['all', 'USD'],
      ['all', '*'],
      ['card_payments', 'USD'],
      ['card_payments', '*'],
    ]) {
      const m = currency === '*' ? 0 : mrr;
      await client.query(`INSERT INTO revenue_totals (project_id, env, rail, currency, mrr_minor, paying_customers) VALUES ($1, 'sandbox', $2, $3, $4, $5)`, [
        projectId,
        rail,
        currency,
        m,
        count,
      ]);
      await client.query(
        `INSERT INTO revenue_daily (project_id, env, rail, currency, day, mrr_minor, paying_customers)
         SELECT $1, 'sandbox', $2, $3, current_date - d, $4, $5 FROM generate_series(0, 365) d`,
        [projectId, rail, currency, m, count],
      );
    }
    await client.query(`ANALYZE`);
  });
}

async function measure(base, project, route, count) {
  const latencies = [];
  for (let i = 0; i < CALLS + 50; i++) {
    const path = route(project, 1 + Math.floor(Math.random() * count));
    const started = performance.now();
    const res = await fetch(base + path, { headers: { Authorization: `Bearer ${project.key}` } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
    if (i >= 50) latencies.push(performance.now() - started);
  }
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

const ROUTES = [
  ['revenue (day series, 90 days)', () => '/v1/revenue?granularity=day&days=90'],
  ['revenue averages', () => '/v1/revenue/averages'],
  ['crossmatch by customerId', (project, n) => `/v1/crossmatch?customerId=cdcust_${project.projectId}_${n}`],
];

async function main() {
  const scratch = await createScratchDatabase(adminUrl, 'rrd');
  const operatorToken = `op_bench_${randomBytes(16).toString('hex')}`;
  const port = await freePort();
  const api = startNode('api', apiEntry, apiEnv(scratch.url, port, operatorToken), apiNodeArgs());
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(api, `${base}/v1/healthz`);
    const small = await mintProject(base, operatorToken, 'bench revenue small');
    const large = await mintProject(base, operatorToken, 'bench revenue large');
    const seeded = performance.now();
    await seedLedger(scratch.url, small.projectId, SMALL);
    await seedLedger(scratch.url, large.projectId, LARGE);
    log(
      `bench: ${os.cpus().length} CPU(s), node ${process.version}; ledgers of ${SMALL} and ${LARGE} paying customers seeded in ${((performance.now() - seeded) / 1000).toFixed(1)} s`,
    );
    for (const [name, route] of ROUTES) {
      const a = await measure(base, small, route, SMALL);
      const b = await measure(base, large, route, LARGE);
      const ratio = b.p99 / a.p99;
      log(`bench: ${name}: small p50 ${a.p50.toFixed(2)} ms p99 ${a.p99.toFixed(2)} ms; large p50 ${b.p50.toFixed(2)} ms p99 ${b.p99.toFixed(2)} ms`);
      log(`${ratio <= MAX_RATIO ? 'ok  ' : 'MISS'} reporting-reads: ${name} p99 at ${LARGE} customers / at ${SMALL} <= ${MAX_RATIO}: ${ratio.toFixed(2)}`);
    }
  } finally {
    await stop(api);
    await scratch.drop();
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  process.exit(1);
});

// Bulk user migration benchmark (POST /v1/migration/users), a phase script beside bench/run.mjs:
//
//   npm run build && DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/migration.mjs
//
// Starts the compiled API on a free loopback port against a fresh scratch database on the
// DATABASE_URL server (dropped afterwards), mints a project, app and secret key through the
// operator API, then sends 1,000-row requests one after the other (a migration tool's loop):
//
//   fresh   BENCH_MIGRATION_REQUESTS requests of 1,000 new users each (a third with a card
//           customer id, a fifth with iOS ids, every row with email, traits and two asserted
//           entitlement keys)                        -> rows/s, p50/p99 of a request
//   rerun   the same requests again (everything exists: the convergence path)  -> same figures
//
// Environment: DATABASE_URL (required), BENCH_MIGRATION_REQUESTS (20), BENCH_WARMUP (3 requests,
// not measured), LOG_LEVEL (warn), BENCH_KEEP_DB=1; the API runs with start:prod's node flags
// and BENCH_API_NODE_ARGS (BENCH_API_PLAIN_NODE=1 leaves start:prod's out).
import { randomBytes, randomUUID } from 'node:crypto';
import os from 'node:os';
import {
  API_ENTRY,
  apiEnv,
  apiNodeArgs,
  freePort,
  createScratchDatabase,
  stop,
  waitForHttp,
  call,
  killChildren,
  requireDatabaseAndBuild,
  startNode,
} from './lib/common.mjs';

const adminUrl = requireDatabaseAndBuild('node bench/migration.mjs');

const REQUESTS = Number(process.env.BENCH_MIGRATION_REQUESTS ?? 20);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const ROWS = 1000;
const log = (line = '') => process.stdout.write(`${line}\n`);

/** One request body: 1,000 realistic rows of a legacy user table. */
function body(run, request) {
  const users = [];
  for (let i = 0; i < ROWS; i++) {
    const n = request * ROWS + i;
    const row = {
      developerUserId: `legacy_${run}_${n}`,
      email: `user${n}@example.com`,
      displayName: `User ${n}`,
      traits: { plan: n % 2 ? 'free' : 'pro', signupYear: 2019 + (n % 7), newsletter: n % 5 === 0 },
      entitlements: { premium: true, legacy_founder: n % 10 === 0, extra_storage: n % 4 === 0 },
    };
    if (n % 3 === 0) row.cardCustomerId = `cus_${run}_${n}`;
    if (n % 5 === 0) {
      row.iosStoreOriginalTransactionId = `2000000${run.length}${n}`;
      row.iosAppAccountToken = randomUUID();
    }
    users.push(row);
  }
  return JSON.stringify({ users });
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

async function phase(label, url, key, bodies) {
  const latencies = [];
  const started = performance.now();
  let last;
  for (const payload of bodies) {
    const t0 = performance.now();
    const res = await fetch(url, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: payload });
    const json = await res.json();
    latencies.push(performance.now() - t0);
    if (res.status !== 200 || json.errors !== 0) throw new Error(`${label}: ${res.status} ${JSON.stringify(json).slice(0, 500)}`);
    last = json;
  }
  const elapsed = (performance.now() - started) / 1000;
  const sorted = [...latencies].sort((a, b) => a - b);
  const result = {
    rowsPerSecond: Math.round((bodies.length * ROWS) / elapsed),
    p50: Math.round(percentile(sorted, 50)),
    p99: Math.round(percentile(sorted, 99)),
    max: Math.round(sorted[sorted.length - 1]),
  };
  log(
    `  ${label.padEnd(6)} ${String(result.rowsPerSecond).padStart(6)} rows/s   p50 ${result.p50} ms   p99 ${result.p99} ms   max ${result.max} ms   (${bodies.length} x ${ROWS} rows; last: created ${last.created}, matched ${last.matched}, granted ${last.entitlementsGranted}, undetermined ${last.entitlementsUndetermined})`,
  );
  return result;
}

async function main() {
  const db = await createScratchDatabase(adminUrl, 'mig');
  const operatorToken = `op_bench_${randomBytes(16).toString('hex')}`;
  try {
    const port = await freePort();
    const api = startNode('api', API_ENTRY, apiEnv(db.url, port, operatorToken), apiNodeArgs());
    const base = `http://127.0.0.1:${port}`;
    try {
      await waitForHttp(api, `${base}/v1/healthz`);
      const project = await call(base, 'POST', '/admin/v1/projects', operatorToken, { name: 'bench migration' });
      const app = await call(base, 'POST', `/admin/v1/projects/${project.id}/apps`, operatorToken, {
        name: 'bench',
        platform: 'web',
        allowedOrigins: ['http://bench.localhost'],
      });
      const key = app.keys.find((k) => k.kind === 'secret' && k.env === 'sandbox').key;
      const url = `${base}/v1/migration/users`;
      log(`bench: ${os.cpus().length} CPU(s), node ${process.version}; POST /v1/migration/users, ${ROWS} rows per request, sequential`);
      const run = randomBytes(3).toString('hex');
      if (WARMUP > 0)
        await phase(
          'warmup',
          url,
          key,
          Array.from({ length: WARMUP }, (_, r) => body(`w${run}`, r)),
        );
      const bodies = Array.from({ length: REQUESTS }, (_, r) => body(run, r));
      log(`  body ~${Math.round(Buffer.byteLength(bodies[0]) / 1024)} KB`);
      await phase('fresh', url, key, bodies);
      await phase('rerun', url, key, bodies);
    } finally {
      await stop(api);
    }
  } finally {
    await db.drop();
  }
}

process.once('SIGINT', () => {
  killChildren();
  process.exit(130);
});
main().catch((err) => {
  process.stderr.write(`bench failed: ${err.stack ?? err}\n`);
  killChildren();
  process.exit(1);
});

// The console's customer reads stay indexed lookups: `npm run build && node bench/operator-reads.mjs`.
//
// Starts the compiled API on a free loopback port against a scratch database on the
// DATABASE_URL server (dropped afterwards), mints a project through the operator API, then
// seeds its sandbox with SQL: BENCH_CUSTOMERS customers (default 100,000), each with a
// developer id, an anonymous id and an email, one card customer id per ten customers, one
// entitlement and two audit entries each, and BENCH_EVENTS events (default 1,000,000) spread
// over the customers and the last 30 days. After ANALYZE it calls, one request at a time,
//   - GET /admin/v1/projects/{id}/customers?q=… (user id, email, cdcust_ id, anonymous id, rail id in turn)
//   - GET /admin/v1/projects/{id}/customers/{customerId} (the customer page, one call)
//   - GET /admin/v1/projects/{id}/overview (its events-today count reads today's partition)
// BENCH_REQUESTS times each (default 400) on random customers and prints p50 and p99, then
// one line per goal (`ok` or `MISS`): p99 of each below 200 ms, the console's API budget.
// Then, when Chromium is present (bench/lib/console-browser.mjs), the same two pages in the
// built console, BENCH_BROWSER_LOADS loads each (default 40) from a blank page to the data
// shown: p50 and p99 and one line per goal, p99 below 1 s. Without Chromium it says so and
// skips that pass.
//
// Environment: DATABASE_URL (required), BENCH_CUSTOMERS, BENCH_EVENTS, BENCH_REQUESTS,
// BENCH_BROWSER_LOADS, CHROMIUM_PATH, LOG_LEVEL (warn), BENCH_KEEP_DB.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import {
  API_ENTRY as apiEntry,
  apiEnv,
  apiNodeArgs,
  createScratchDatabase,
  freePort,
  requireDatabaseAndBuild,
  startNode,
  stop,
  waitForHttp,
  withClient,
} from './lib/common.mjs';
import { chromiumPath, consoleBrowserPass } from './lib/console-browser.mjs';
import { mintWebApp } from './lib/read-routes.mjs';

const adminUrl = requireDatabaseAndBuild('node bench/operator-reads.mjs');
const CUSTOMERS = Number(process.env.BENCH_CUSTOMERS ?? 100_000);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 400);
const BROWSER_LOADS = Number(process.env.BENCH_BROWSER_LOADS ?? 40);
const P99_GOAL_MS = 200;
const RENDER_GOAL_MS = 1000;
const log = (line = '') => process.stdout.write(`${line}\n`);

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Seeds the project's sandbox in a few set-based statements (ids derive from the row number). */
async function seed(url, projectId, appId) {
  await withClient(url, async (db) => {
    const started = performance.now();
    const q = (sql, params = []) => db.query(sql, params);
    await q(
      `INSERT INTO customers (id, project_id, env, email, created_at, updated_at)
       SELECT 'cdcust_b' || i, $1, 'sandbox', 'user' || i || '@bench.example', now() - (i % 1000) * interval '1 hour', now()
         FROM generate_series(1, $2) i`,
      [projectId, CUSTOMERS],
    );
    await q(
      `INSERT INTO customer_aliases (project_id, env, type, value, customer_id, created_at)
       SELECT $1, 'sandbox', t.type, t.prefix || i, 'cdcust_b' || i, now()
         FROM generate_series(1, $2) i,
              (VALUES ('developer', 'user_'), ('anonymous', 'anon_')) t(type, prefix)`,
      [projectId, CUSTOMERS],
    );
    await q(
      `INSERT INTO customer_aliases (project_id, env, type, value, customer_id, created_at)
       SELECT $1, 'sandbox', 'card_customer_id', 'cus_bench' || i, 'cdcust_b' || i, now() FROM generate_series(1, $2, 10) i`,
      [projectId, CUSTOMERS],
    );
    await q(
      `INSERT INTO entitlements (project_id, env, customer_id, entitlement_key, rail, product_id, subscription_id, state, valid_until, created_at, updated_at)
       SELECT $1, 'sandbox', 'cdcust_b' || i, 'pro', 'manual', 'manual', 'srv_grant_bench' || i, 'active', now() + interval '30 days', now(), now()
         FROM generate_series(1, $2) i`,
      [projectId, CUSTOMERS],
    );
    await q(
      `INSERT INTO audit_entries (project_id, env, event_id, rail, event_type, customer_id, decision, reason, actor, created_at)
       SELECT $1, 'sandbox', 'srv_bench_' || i || '_' || k, 'manual', 'entitlement.granted_manually', 'cdcust_b' || i, 'applied', 'bench', 'operator',
              now() - k * interval '1 day'
         FROM generate_series(1, $2) i, generate_series(1, 2) k`,
      [projectId, CUSTOMERS],
    );
    const nowMs = Date.now();
    const batch = 250_000;
    for (let from = 1; from <= EVENTS; from += batch) {
      await q(
        `INSERT INTO events (project_id, env, event_id, client_day, app_id, name, timestamp_ms, received_at_ms, level, customer_id)
         SELECT $1, 'sandbox', 'ev_bench_' || n, (to_timestamp(ts / 1000.0) AT TIME ZONE 'UTC')::date, $2,
                CASE WHEN n % 50 = 0 THEN 'error.unhandled' ELSE 'screen_view' END, ts, ts,
                CASE WHEN n % 50 = 0 THEN 'error' END, 'cdcust_b' || (1 + n % $3)
           FROM (SELECT n, $4::bigint - (n % 2592000) * 1000 AS ts FROM generate_series($5::bigint, $6::bigint) n) s`,
        [projectId, appId, CUSTOMERS, nowMs, from, Math.min(EVENTS, from + batch - 1)],
      );
    }
    await q('ANALYZE');
    log(`bench: seeded ${CUSTOMERS} customers and ${EVENTS} events in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  });
}

async function timed(base, token, pathname) {
  const started = performance.now();
  const res = await fetch(base + pathname, { headers: { Authorization: `Bearer ${token}` } });
  const body = await res.json();
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`GET ${pathname}: ${res.status} ${JSON.stringify(body)}`);
  return { ms, body };
}

async function main() {
  const scratch = await createScratchDatabase(adminUrl, 'opr');
  const operatorToken = `op_bench_${randomBytes(16).toString('hex')}`;
  const port = await freePort();
  // No metrics listener: its fixed port may be taken by another run on the machine.
  const api = startNode('api', apiEntry, { ...apiEnv(scratch.url, port, operatorToken), METRICS_PORT: '0' }, apiNodeArgs());
  const apiBase = `http://127.0.0.1:${port}`;
  let failed = false;
  try {
    await waitForHttp(api, `${apiBase}/v1/healthz`);
    const { project } = await mintWebApp(apiBase, operatorToken, 'bench operator reads');
    const appId = (await (await fetch(`${apiBase}/admin/v1/projects/${project.id}/apps`, { headers: { Authorization: `Bearer ${operatorToken}` } })).json())
      .data[0].id;
    log(`bench: ${os.cpus().length} CPU(s), node ${process.version}, ${CUSTOMERS} customers, ${EVENTS} events, ${REQUESTS} requests per route`);
    await seed(scratch.url, project.id, appId);
    const base = `/admin/v1/projects/${project.id}/customers`;
    const pick = () => 1 + Math.floor(Math.random() * CUSTOMERS);
    const queries = [
      (i) => `user_${i}`,
      (i) => `user${i}@bench.example`,
      (i) => `cdcust_b${i}`,
      (i) => `anon_${i}`,
      (i) => `cus_bench${1 + 10 * Math.floor((i - 1) / 10)}`,
    ];
    // Warm-up: connections, prepared plans, caches.
    for (let n = 0; n < 20; n++) {
      await timed(apiBase, operatorToken, `${base}?env=sandbox&q=user_${pick()}`);
      await timed(apiBase, operatorToken, `${base}/cdcust_b${pick()}?env=sandbox`);
    }
    const search = [];
    const detail = [];
    for (let n = 0; n < REQUESTS; n++) {
      const i = pick();
      const found = await timed(apiBase, operatorToken, `${base}?env=sandbox&q=${encodeURIComponent(queries[n % queries.length](i))}`);
      if (found.body.data.length !== 1) throw new Error(`search ${queries[n % queries.length](i)} found ${found.body.data.length} customers`);
      search.push(found.ms);
      const page = await timed(apiBase, operatorToken, `${base}/cdcust_b${i}?env=sandbox`);
      if (page.body.recentEvents.length === 0 && EVENTS >= CUSTOMERS) throw new Error(`customer cdcust_b${i} has no events`);
      detail.push(page.ms);
    }
    const report = (name, values, goalMs, unit) => {
      const p50 = percentile(values, 50);
      const p99 = percentile(values, 99);
      log(`bench: ${name}: p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (${values.length} ${unit})`);
      const ok = p99 < goalMs;
      failed ||= !ok;
      log(`${ok ? 'ok' : 'MISS'}   ${name} p99 ${p99.toFixed(1)} ms < ${goalMs} ms (ratio ${(p99 / goalMs).toFixed(2)})`);
    };
    report('customer search', search, P99_GOAL_MS, 'requests');
    report('customer page', detail, P99_GOAL_MS, 'requests');
    // The overview counts today's events (an index probe of today's partition, ~1/30 of them here).
    const overview = [];
    for (let n = 0; n < Math.min(REQUESTS, 100); n++) {
      const read = await timed(apiBase, operatorToken, `/admin/v1/projects/${project.id}/overview?env=sandbox`);
      if (!(read.body.eventsToday > 0) && EVENTS >= 2_592_000) throw new Error(`overview eventsToday ${read.body.eventsToday}`);
      overview.push(read.ms);
    }
    report('overview (events today)', overview, P99_GOAL_MS, 'requests');
    const rendered = await consoleBrowserPass({
      base: apiBase,
      projectId: project.id,
      token: operatorToken,
      loads: BROWSER_LOADS,
      pick,
      searchFor: (i) => `user_${i}`,
      customerOf: (i) => `cdcust_b${i}`,
      emailOf: (i) => `user${i}@bench.example`,
    });
    if (rendered === null) {
      log(`bench: browser pass skipped: no Chromium at ${chromiumPath()} (install chromium or set CHROMIUM_PATH)`);
    } else {
      report('console customer search rendered', rendered.search, RENDER_GOAL_MS, 'loads');
      report('console customer page rendered', rendered.customer, RENDER_GOAL_MS, 'loads');
    }
  } finally {
    await stop(api);
    await scratch.drop();
  }
  if (failed) process.exitCode = 1;
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  process.exitCode = 1;
});

// Charts and the console's reads at the scale of data, a phase script beside bench/run.mjs:
//
//   npm run build && DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/charts-console.mjs
//
// Starts the compiled API (NODE_ENV=production, start:prod's node flags) on a scratch database,
// mints a project whose secret key reads revenue and aggregates, and seeds its sandbox with
// set-based SQL (bench/lib/charts-seed.mjs): BENCH_CHARTS_CUSTOMERS customers (20,000) and
// BENCH_CHARTS_EVENTS events (200,000), the ledger, errors and activity of the read API's bench,
// and BENCH_CHARTS_DAYS (731) days of the per-day facts the charts read. The goal's volume:
// BENCH_CHARTS_CUSTOMERS=1000000 BENCH_CHARTS_EVENTS=10000000. Then, one request at a time after
// a warm-up, BENCH_CHARTS_REQUESTS (200) of each, or as many as BENCH_CHARTS_READ_SECONDS (30)
// allow (at least 5; a failed request counts with its time and misses the goal):
//   charts     GET /v1/charts/{chart} for each chart over two years of days (731), rotating
//              day / week / month and, for the charts that split, no split / rail / product.
//              Goal: p99 < 50 ms each.
//   list       the operator's customer list: its first page (newest first), and filtered and
//              sorted pages (active by MRR, by last seen, card payers by MRR ascending, a partial
//              search). Goal: p99 < 200 ms each (the console's budget for one API call).
//   export     GET /admin/v1/projects/{id}/customers.csv of every customer, streamed and counted
//              by this script: rows/s (goal >= 50,000) and the API process's RSS sampled every
//              50 ms (/proc) against its RSS before (goal: growth <= BENCH_CHARTS_RSS_GROWTH_MB, 64,
//              whatever the size of the file: memory stays flat while rows stream; the bound
//              leaves room for V8's young generation, two 32 MB semi-spaces under start:prod's
//              flags, which fills under any allocation). The peak by half the rows is printed too.
//   pages      the API calls each console page makes when it opens (overview, customers, a
//              customer, errors, rails), sent together as the browser sends them; a load's time
//              is until the last answer. BENCH_CHARTS_PAGE_LOADS (50) loads per page. Goal: p99 < 1 s.
// One `ok`/`MISS` line per goal.
// Environment: DATABASE_URL (required), BENCH_CHARTS_CUSTOMERS, BENCH_CHARTS_EVENTS, BENCH_CHARTS_DAYS,
// BENCH_CHARTS_REQUESTS, BENCH_CHARTS_READ_SECONDS, BENCH_CHARTS_PAGE_LOADS, BENCH_CHARTS_RSS_GROWTH_MB, LOG_LEVEL (warn), BENCH_KEEP_DB.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import {
  API_ENTRY,
  apiEnv,
  apiNodeArgs,
  call,
  createScratchDatabase,
  freePort,
  killChildren,
  requireDatabaseAndBuild,
  startNode,
  stop,
  waitForHttp,
} from './lib/common.mjs';
import { mintReadProject } from './lib/read-scale-seed.mjs';
import { seedCharts } from './lib/charts-seed.mjs';

const adminUrl = requireDatabaseAndBuild('node bench/charts-console.mjs');
const CUSTOMERS = Number(process.env.BENCH_CHARTS_CUSTOMERS ?? 20_000);
const EVENTS = Number(process.env.BENCH_CHARTS_EVENTS ?? 200_000);
const DAYS = Math.min(731, Number(process.env.BENCH_CHARTS_DAYS ?? 731));
const REQUESTS = Number(process.env.BENCH_CHARTS_REQUESTS ?? 200);
const PAGE_LOADS = Number(process.env.BENCH_CHARTS_PAGE_LOADS ?? 50);
const RSS_GROWTH_MB = Number(process.env.BENCH_CHARTS_RSS_GROWTH_MB ?? 64);
const CHART_P99_MS = 50;
const LIST_P99_MS = 200;
const EXPORT_ROWS_PER_S = 50_000;
const PAGE_P99_MS = 1000;
const READ_SECONDS = Number(process.env.BENCH_CHARTS_READ_SECONDS ?? 30);
const WARMUP = 20;
const CHARTS = ['mrr', 'revenue', 'refunds', 'ltv_cohorts', 'active_subscriptions', 'trials', 'churn', 'new_customers', 'events'];
const SEGMENTED = new Set(['mrr', 'revenue', 'refunds', 'active_subscriptions']);
const OVERVIEW_CHARTS = ['mrr', 'revenue', 'active_subscriptions', 'trials', 'churn', 'refunds', 'new_customers', 'events'];
const log = (line = '') => process.stdout.write(`${line}\n`);
const check = (ok) => (ok ? 'ok  ' : 'MISS');
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
};
const day = (offset) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
/** The process's resident set (bytes, /proc), or null. */
const rss = (pid) => {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return kb ? Number(kb[1]) * 1024 : null;
  } catch {
    return null;
  }
};
const mb = (bytes) => (bytes / 1048576).toFixed(1);

/** One GET: its time, and its status when it is not 200 (null then). */
async function get(base, path, headers) {
  const started = performance.now();
  // A keep-alive connection the server closed as it was reused fails before any answer: once more.
  const res = await fetch(base + path, { headers }).catch(() => fetch(base + path, { headers }));
  await res.arrayBuffer();
  return { ms: performance.now() - started, failed: res.status === 200 ? null : res.status };
}

/**
 * Requests one at a time, `next(i)` naming each path: an unmeasured warm-up (WARMUP requests or
 * 5 s), then REQUESTS requests or READ_SECONDS, whichever ends first. p50 and p99 over all of them,
 * failed ones included with their time, and the failures' statuses.
 */
async function measure(base, headers, next) {
  const warmUntil = performance.now() + 5000;
  for (let i = 0; i < WARMUP && performance.now() < warmUntil; i++) await get(base, next(i), headers);
  const ms = [];
  const failures = [];
  const until = performance.now() + READ_SECONDS * 1000;
  for (let i = 0; i < REQUESTS && (i < 5 || performance.now() < until); i++) {
    const result = await get(base, next(i), headers);
    ms.push(result.ms);
    if (result.failed !== null) failures.push(result.failed);
  }
  return { p50: percentile(ms, 50), p99: percentile(ms, 99), n: ms.length, failures };
}

function report(name, result, goalMs) {
  const failures = result.failures ?? [];
  const ok = result.p99 < goalMs && failures.length === 0;
  const failed = failures.length > 0 ? `, ${failures.length} failed (${[...new Set(failures)].join(', ')})` : '';
  log(
    `${check(ok)} charts-console: ${name} p99 ${result.p99.toFixed(1)} ms (p50 ${result.p50.toFixed(1)} ms, ${result.n} requests${failed}; goal < ${goalMs} ms)`,
  );
  return ok;
}

/** The chart's request `i`: two years of days, granularity and split rotating. */
function chartPath(chart, i) {
  const granularity = ['day', 'week', 'month'][i % 3];
  const segment = SEGMENTED.has(chart) ? ['none', 'rail', 'product'][Math.floor(i / 3) % 3] : 'none';
  return `/v1/charts/${chart}?from=${day(-(DAYS - 1))}&to=${day(0)}&granularity=${granularity}&segment=${segment}`;
}

/** The whole CSV export streamed and counted, with the API's RSS sampled meanwhile. */
async function exportRun(base, headers, projectId, pid) {
  const before = rss(pid);
  let peak = before ?? 0;
  const timer = setInterval(() => (peak = Math.max(peak, rss(pid) ?? 0)), 50);
  const started = performance.now();
  const res = await fetch(`${base}/admin/v1/projects/${projectId}/customers.csv?env=sandbox`, { headers });
  if (res.status !== 200) throw new Error(`customers.csv: ${res.status} ${await res.text()}`);
  let lines = 0;
  let bytes = 0;
  // The peak so far when half the rows are in: a stream's memory stops growing early.
  let half = null;
  for await (const chunk of res.body) {
    bytes += chunk.length;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
    if (half === null && lines >= CUSTOMERS / 2) half = Math.max(peak, rss(pid) ?? 0);
  }
  const seconds = (performance.now() - started) / 1000;
  clearInterval(timer);
  peak = Math.max(peak, rss(pid) ?? 0);
  return { rows: lines - 1, bytes, seconds, before, peak, half };
}

/** The API calls each console page makes when it opens (the project's name for its title with each). */
function pages(projectId, customerOf) {
  const p = `/admin/v1/projects/${projectId}`;
  const range = `from=${day(-29)}&to=${day(0)}&granularity=day&segment=none`;
  return {
    overview: () => [p, `${p}/overview?env=sandbox`, `${p}/charts?env=sandbox&charts=${OVERVIEW_CHARTS.join(',')}&${range}`],
    customers: () => [p, `${p}/customers?env=sandbox&match=partial&limit=25`],
    customer: (i) => [p, `${p}/customers/${customerOf(i)}?env=sandbox`, `${p}/customers/${customerOf(i)}/timeline?env=sandbox&limit=50`],
    errors: () => [p, `${p}/error-issues?env=sandbox&sort=last_seen&limit=25`],
    rails: () => [p, `${p}/rails?env=sandbox`],
  };
}

async function main() {
  log(
    `charts-console: ${os.cpus().length} CPU(s), node ${process.version}, ${CUSTOMERS} customers, ${EVENTS} events, ${DAYS} days of facts, load average ${load()}`,
  );
  const db = await createScratchDatabase(adminUrl, 'charts_console');
  const operatorToken = `op_bench_${randomBytes(16).toString('hex')}`;
  const port = await freePort();
  const api = startNode('api', API_ENTRY, { ...apiEnv(db.url, port, operatorToken), METRICS_PORT: '0' }, apiNodeArgs());
  const base = `http://127.0.0.1:${port}`;
  const results = [];
  try {
    await waitForHttp(api, `${base}/v1/readyz`, 120_000);
    const project = await mintReadProject(base, operatorToken);
    const apps = await call(base, 'GET', `/admin/v1/projects/${project.projectId}/apps`, operatorToken);
    const started = performance.now();
    await seedCharts(db.url, { projectId: project.projectId, appId: apps.data[0].id, customers: CUSTOMERS, events: EVENTS, days: DAYS });
    log(`seeded in ${((performance.now() - started) / 1000).toFixed(1)} s; load average ${load()}`);
    const key = { Authorization: `Bearer ${project.key}` };
    const operator = { Authorization: `Bearer ${operatorToken}` };
    let n = 7;
    const any = () => (n = (n * 1103515245 + 12345) % 2147483648) % Math.max(1, CUSTOMERS);

    log('');
    log(`Charts: ${REQUESTS} requests each over ${DAYS} days, one at a time:`);
    for (const chart of CHARTS) results.push(report(`GET /v1/charts/${chart}`, await measure(base, key, (i) => chartPath(chart, i)), CHART_P99_MS));

    log('');
    log(`Customer list: ${REQUESTS} requests each, one at a time:`);
    const list = `/admin/v1/projects/${project.projectId}/customers?env=sandbox&limit=25`;
    const listReads = [
      ['first page (newest first)', () => `${list}&match=partial`],
      ['active, by MRR', () => `${list}&state=active&sort=mrr&order=desc`],
      ['by last seen', () => `${list}&sort=last_seen&order=desc`],
      ['card payers, by MRR ascending', () => `${list}&rail=card_payments&paying=true&sort=mrr&order=asc`],
      ['partial search', () => `${list}&match=partial&q=pre_user_${any()}`],
    ];
    for (const [name, next] of listReads) results.push(report(`customer list, ${name}`, await measure(base, operator, next), LIST_P99_MS));

    log('');
    log('CSV export of every customer:');
    await exportRun(base, operator, project.projectId, api.child.pid); // warm-up: code compiled, pages cached
    const exported = await exportRun(base, operator, project.projectId, api.child.pid);
    const rate = exported.rows / exported.seconds;
    const growth = exported.before === null ? null : exported.peak - exported.before;
    log(
      `  ${exported.rows} rows, ${mb(exported.bytes)} MiB in ${exported.seconds.toFixed(2)} s; API RSS ${exported.before === null ? 'n/a' : mb(exported.before)} MiB before, ` +
        `peak ${mb(exported.half ?? 0)} MiB by half the rows, ${mb(exported.peak)} MiB in all`,
    );
    if (exported.rows !== CUSTOMERS) log(`  warning: ${exported.rows} rows exported for ${CUSTOMERS} customers`);
    results.push(rate >= EXPORT_ROWS_PER_S);
    log(`${check(rate >= EXPORT_ROWS_PER_S)} charts-console: CSV export ${Math.round(rate)} rows/s (goal >= ${EXPORT_ROWS_PER_S})`);
    const flat = growth !== null && growth <= RSS_GROWTH_MB * 1048576;
    results.push(flat);
    log(
      `${check(flat)} charts-console: CSV export RSS growth ${growth === null ? 'n/a' : `${mb(growth)} MiB`} for a ${mb(exported.bytes)} MiB file (goal <= ${RSS_GROWTH_MB} MiB)`,
    );

    log('');
    log(`Console pages: ${PAGE_LOADS} loads each, each page's API calls sent together:`);
    for (const [name, calls] of Object.entries(pages(project.projectId, () => `cdcust_pre${any()}`))) {
      const failures = [];
      const once = async (i) => {
        const started = performance.now();
        const answers = await Promise.all(calls(i).map((path) => get(base, path, operator)));
        for (const answer of answers) if (answer.failed !== null) failures.push(answer.failed);
        return performance.now() - started;
      };
      for (let i = 0; i < 5; i++) await once(i);
      failures.length = 0;
      const ms = [];
      for (let i = 0; i < PAGE_LOADS; i++) ms.push(await once(i));
      const result = { p50: percentile(ms, 50), p99: percentile(ms, 99), n: ms.length, failures };
      results.push(report(`${name} page data (${calls(0).length} calls)`, result, PAGE_P99_MS));
    }
    log('');
    log(`charts-console: ${results.filter(Boolean).length} of ${results.length} goals held; load average ${load()}`);
  } finally {
    await stop(api);
    await db.drop();
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  killChildren();
  process.exit(1);
});

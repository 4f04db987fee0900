// The card rail's mixed lifecycle stream, a phase script beside bench/run.mjs:
//
//   npm run build && DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/card-lifecycle.mjs
//
// Starts the compiled API (NODE_ENV=production, start:prod's node flags) on a scratch database
// with a project whose card rail has a notification secret (RAIL_SECRETS_FILE), 3 grace days
// and two products, and starts two pools of BENCH_LIFECYCLE_SUBSCRIPTIONS subscriptions through
// the rail (bench/lib/card-lifecycle-stream.mjs). Then:
//   throughput  BENCH_LIFECYCLE_ROUNDS alternating rounds (renewal, mixed; then the reverse) of a
//               closed loop of BENCH_LIFECYCLE_SECONDS on BENCH_LIFECYCLE_CONNECTIONS connections:
//               the renewal-only stream (customer.subscription.updated + invoice.paid per renewal)
//               on one pool, the mixed stream (renewals, failed payments and past_due, recoveries,
//               partial refunds, pauses, resumes) on the other. Goal: the mixed stream's
//               notifications/s at least 0.9x the renewal stream's (means of the rounds).
//   statements  a copy of the same build on the same database, preloaded with
//               bench/capture-sql.mjs and without background jobs, takes BENCH_LIFECYCLE_COUNT
//               steps of each stream one notification at a time; every statement each request
//               sends to PostgreSQL is recorded (BEGIN and COMMIT included). Goal: statements per
//               applied notification of the mixed stream <= 8 (the renewal stream's is printed
//               beside it, and each notification type's mean).
// Each round also prints the API's and PostgreSQL's CPU per notification (/proc) and every
// answer's type and decision. No webhook endpoint is registered (the outbox's cost is
// bench/webhooks.mjs's).
// Environment: DATABASE_URL (required), BENCH_LIFECYCLE_SECONDS (10), BENCH_LIFECYCLE_ROUNDS (2),
// BENCH_LIFECYCLE_CONNECTIONS (8), BENCH_LIFECYCLE_SUBSCRIPTIONS (400 per stream),
// BENCH_LIFECYCLE_COUNT (steps per stream in the statement count, 100), BENCH_DEBUG=1 (the
// statements of the first notification of each type and decision), LOG_LEVEL (warn), BENCH_KEEP_DB.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  API_ENTRY,
  ROOT,
  apiEnv,
  apiNodeArgs,
  cpuSeconds,
  createScratchDatabase,
  freePort,
  killChildren,
  requireDatabaseAndBuild,
  samplePostgresCpu,
  startNode,
  stop,
  waitForHttp,
} from './lib/common.mjs';
import { mintWebApp } from './lib/read-routes.mjs';
import { runStream, runSteps, setUpCardRail, startSubscriptions } from './lib/card-lifecycle-stream.mjs';

const adminUrl = requireDatabaseAndBuild('node bench/card-lifecycle.mjs');
const SECONDS = Number(process.env.BENCH_LIFECYCLE_SECONDS ?? 10);
const ROUNDS = Math.max(1, Number(process.env.BENCH_LIFECYCLE_ROUNDS ?? 2));
const CONNECTIONS = Number(process.env.BENCH_LIFECYCLE_CONNECTIONS ?? 8);
const SUBSCRIPTIONS = Number(process.env.BENCH_LIFECYCLE_SUBSCRIPTIONS ?? 400);
const COUNT_STEPS = Number(process.env.BENCH_LIFECYCLE_COUNT ?? 100);
const DEBUG = process.env.BENCH_DEBUG === '1';
const MIN_RATIO = 0.9;
const MAX_STATEMENTS = 8;
const TRANSACTION_CONTROL = /^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|START TRANSACTION|SET TRANSACTION)\b/i;
const log = (line = '') => process.stdout.write(`${line}\n`);
const check = (ok) => (ok ? 'ok  ' : 'MISS');
const mean = (values) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

async function startApi(name, dbUrl, operatorToken, secretsPath, { nodeArgs = apiNodeArgs(), env = {} } = {}) {
  const port = await freePort();
  const proc = startNode(name, API_ENTRY, { ...apiEnv(dbUrl, port, operatorToken), METRICS_PORT: '0', RAIL_SECRETS_FILE: secretsPath, ...env }, nodeArgs);
  const base = `http://127.0.0.1:${port}`;
  await waitForHttp(proc, `${base}/v1/readyz`, 120_000);
  return { proc, base };
}

/** One closed-loop window of `stream`, with the API's and PostgreSQL's CPU over it. */
async function round(api, target, subs, stream) {
  const apiFrom = cpuSeconds(api.proc.child.pid);
  const postgres = samplePostgresCpu();
  const deadline = Date.now() + SECONDS * 1000;
  const result = await runStream(target, subs, stream, CONNECTIONS, () => Date.now() >= deadline);
  const apiTo = cpuSeconds(api.proc.child.pid);
  const { seconds: pgSeconds } = postgres.stop();
  const rate = result.notifications / SECONDS;
  const per = (seconds) => (seconds === null || result.notifications === 0 ? 'n/a' : `${((seconds * 1000) / result.notifications).toFixed(2)} ms`);
  log(
    `  ${stream.padEnd(8)} ${rate.toFixed(1)} notifications/s (${result.notifications} in ${SECONDS} s, ${result.applied} applied, ${result.failed} failed); ` +
      `CPU per notification: API ${per(apiFrom === null || apiTo === null ? null : apiTo - apiFrom)}, PostgreSQL ${per(pgSeconds)}; load average ${load()}`,
  );
  return { ...result, rate };
}

/** Statements per notification of `steps` steps of `stream` through the capturing copy. */
async function statements(capture, target, subs, stream) {
  const result = await runSteps(target, subs, stream, COUNT_STEPS);
  const byType = new Map();
  let all = 0;
  let control = 0;
  for (const res of result.captures) {
    const recorded = await (await fetch(`${capture.base}/__bench/captured?id=${res.capture}`)).json();
    if (!Array.isArray(recorded)) throw new Error(`no statements recorded for ${res.type}`);
    const tx = recorded.filter((s) => TRANSACTION_CONTROL.test(s.sql)).length;
    all += recorded.length;
    control += tx;
    const key = `${res.type} (${res.decision})`;
    if (DEBUG && !byType.has(key)) {
      log(`    ${key}, the statements of the first one:`);
      for (const s of recorded) log(`      ${s.name ? `[${s.name}] ` : ''}${s.sql.replace(/\s+/g, ' ').trim().slice(0, 160)}`);
    }
    const entry = byType.get(key) ?? { n: 0, statements: 0 };
    entry.n++;
    entry.statements += recorded.length;
    byType.set(key, entry);
  }
  const perApplied = all / Math.max(1, result.applied);
  log(
    `  ${stream.padEnd(8)} ${result.notifications} notifications (${result.applied} applied, ${result.failed} failed): ${all} statements, ` +
      `${perApplied.toFixed(1)} per applied notification (${((all - control) / Math.max(1, result.applied)).toFixed(1)} without BEGIN/COMMIT)`,
  );
  for (const [key, entry] of [...byType].sort()) log(`    ${key.padEnd(48)} ${entry.n} x ${(entry.statements / entry.n).toFixed(1)} statements`);
  return { perApplied, result };
}

async function main() {
  log(`card-lifecycle: ${os.cpus().length} CPU(s), node ${process.version}, load average ${load()}`);
  const db = await createScratchDatabase(adminUrl, 'card_lifecycle');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-card-lifecycle-'));
  const secretsPath = path.join(dir, 'rail-secrets.json');
  const operatorToken = `op_bench_${randomBytes(16).toString('hex')}`;
  const procs = [];
  try {
    writeFileSync(secretsPath, JSON.stringify({ projects: {} }));
    const api = await startApi('api', db.url, operatorToken, secretsPath);
    procs.push(api.proc);
    const { project } = await mintWebApp(api.base, operatorToken, 'bench card lifecycle');
    await setUpCardRail(api.base, operatorToken, secretsPath, project.id);
    const target = { base: api.base, projectId: project.id };
    const started = Date.now();
    const retried = new Map();
    const pools = {
      renewal: await startSubscriptions(target, SUBSCRIPTIONS, 'r', retried),
      mixed: await startSubscriptions(target, SUBSCRIPTIONS, 'm', retried),
    };
    const again = [...retried].map(([status, n]) => `${n} answered ${status}`).join(', ');
    log(`started ${SUBSCRIPTIONS} subscriptions per stream in ${Math.round((Date.now() - started) / 1000)} s${again ? ` (sent again: ${again})` : ''}`);

    // Warm-up (unmeasured): both streams' code paths compiled, their plans cached.
    for (const stream of ['renewal', 'mixed']) {
      const until = Date.now() + 3000;
      await runStream(target, pools[stream], stream, CONNECTIONS, () => Date.now() >= until);
    }

    log('');
    log(`Throughput: ${ROUNDS} alternating round(s) of ${SECONDS} s closed loop on ${CONNECTIONS} connections per stream:`);
    const rates = { renewal: [], mixed: [] };
    const decisions = { renewal: new Map(), mixed: new Map() };
    for (let r = 0; r < ROUNDS; r++) {
      for (const stream of r % 2 ? ['mixed', 'renewal'] : ['renewal', 'mixed']) {
        const result = await round(api, target, pools[stream], stream);
        rates[stream].push(result.rate);
        for (const [key, n] of result.byType) decisions[stream].set(key, (decisions[stream].get(key) ?? 0) + n);
      }
    }
    for (const stream of ['renewal', 'mixed']) {
      log(`  ${stream} answers: ${[...decisions[stream]].map(([key, n]) => `${key} ${n}`).join(', ')}`);
    }

    log('');
    log(`Statements: ${COUNT_STEPS} steps per stream, one notification at a time, through a copy preloaded with bench/capture-sql.mjs:`);
    const nodeArgs = `${apiNodeArgs()} --import ${path.join(ROOT, 'bench/capture-sql.mjs')}`.trim();
    const capture = await startApi('capture', db.url, operatorToken, secretsPath, { nodeArgs, env: { BACKGROUND_JOBS: 'disabled' } });
    procs.push(capture.proc);
    const captureTarget = { base: capture.base, projectId: project.id, capture: true };
    const renewalCount = await statements(capture, captureTarget, pools.renewal, 'renewal');
    const mixedCount = await statements(capture, captureTarget, pools.mixed, 'mixed');

    log('');
    const renewalRate = mean(rates.renewal);
    const mixedRate = mean(rates.mixed);
    const ratio = mixedRate / Math.max(1e-9, renewalRate);
    log(
      `${check(ratio >= MIN_RATIO)} card-lifecycle: mixed stream ${mixedRate.toFixed(1)} notifications/s vs renewal-only ${renewalRate.toFixed(1)} ` +
        `(${ratio.toFixed(2)}x, mean of ${ROUNDS}; goal >= ${MIN_RATIO}x)`,
    );
    log(
      `${check(mixedCount.perApplied <= MAX_STATEMENTS)} card-lifecycle: PostgreSQL statements per applied notification, mixed stream ` +
        `${mixedCount.perApplied.toFixed(1)} (goal <= ${MAX_STATEMENTS}); renewal-only ${renewalCount.perApplied.toFixed(1)}`,
    );
  } finally {
    for (const proc of procs.reverse()) await stop(proc);
    rmSync(dir, { recursive: true, force: true });
    await db.drop();
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  killChildren();
  process.exit(1);
});

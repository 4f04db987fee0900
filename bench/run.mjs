// `npm run bench` (= npm run build && node bench/run.mjs): ingestion benchmark of POST /v1/events.
//
// Starts the compiled API on a free loopback port against a fresh scratch database on the
// DATABASE_URL server (dropped afterwards), mints a project, app and keys through the
// operator API, raises the project's events bucket (so the run measures ingestion, not
// throttling), and starts the bare baseline beside it (bench/baseline.mjs: node:http +
// JSON.parse + the same single INSERT). Every request is a realistic 100-event web-client
// batch with fresh eventIds. Each phase starts on emptied tables.
//
//   throughput  autocannon, 32 connections, closed loop, BENCH_ROUNDS rounds alternating
//               api / baseline                                      -> events/s and the ratio
//   latency     200 batches/s = 20,000 events/s, steady open loop over 32 keep-alive
//               connections, latency from each request's due time   -> p50/p99 ack at that load
//
// Environment: DATABASE_URL (required), BENCH_DURATION (s per phase, 15), BENCH_ROUNDS (2),
// BENCH_CONNECTIONS (32), BENCH_TARGET_EVENTS (20000), LOG_LEVEL (warn), DB_POOL_SIZE (API
// default), BENCH_KEEP_DB=1, BENCH_API_NODE_ARGS / BENCH_BASELINE_NODE_ARGS (e.g.
// "--cpu-prof --cpu-prof-dir=/tmp/prof"), BENCH_DEBUG=1 (slowest requests of the latency phase).
// `node bench/run.mjs --sample-body` prints one body.
import { spawn } from 'node:child_process';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DURATION = Number(process.env.BENCH_DURATION ?? 15);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const TARGET_EVENTS = Number(process.env.BENCH_TARGET_EVENTS ?? 20_000);
const EVENTS_PER_BATCH = 100;
const WARMUP_SECONDS = 3;
const ORIGIN = 'http://bench.localhost:3000';
const TARGETS = { p99Ms: 50, eventsPerSecond: 20_000, ratio: 0.6 };

const adminUrl = process.env.DATABASE_URL;
const apiEntry = path.join(root, 'dist/apps/api/src/main.js');

function preflight() {
  if (!adminUrl) {
    process.stderr.write(
      'bench: DATABASE_URL is required (a PostgreSQL server the benchmark may create a scratch database on), e.g.\n' +
        '  DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres LOG_LEVEL=warn npm run bench\n',
    );
    process.exit(2);
  }
  if (!existsSync(apiEntry)) {
    process.stderr.write(`bench: ${apiEntry} is missing; run "npm run bench" (it builds first) or "npm run build"\n`);
    process.exit(2);
  }
}

const children = new Set();
const log = (line = '') => process.stdout.write(`${line}\n`);

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function withDatabase(url, database) {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function adminQuery(sql) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

function start(name, file, env, nodeArgs = '') {
  const child = spawn(process.execPath, [...nodeArgs.split(' ').filter(Boolean), file], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let output = '';
  const keep = (chunk) => {
    output = (output + chunk.toString()).slice(-8000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  child.on('exit', () => children.delete(child));
  return { child, output: () => output, name };
}

async function stop(proc) {
  if (proc.child.exitCode !== null) return;
  const exited = new Promise((resolve) => proc.child.once('exit', resolve));
  proc.child.kill('SIGTERM');
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

async function waitForHttp(proc, url, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.child.exitCode !== null) throw new Error(`${proc.name} exited (${proc.child.exitCode}):\n${proc.output()}`);
    try {
      const res = await fetch(url, { method: url.endsWith('/v1/events') ? 'OPTIONS' : 'GET' });
      if (res.status < 500) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${proc.name} did not answer on ${url} within ${timeoutMs} ms:\n${proc.output()}`);
}

async function call(base, method, pathname, token, body) {
  const res = await fetch(base + pathname, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json().catch(() => ({}));
  if (res.status >= 300) throw new Error(`${method} ${pathname}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

// ---- realistic web-client batches -------------------------------------------------------

const MARK = '~~EVENT-ID~~';
const PAGES = ['/', '/pricing', '/docs/getting-started', '/blog/launch-week', '/account/billing', '/checkout'];
const NAMES = ['page.viewed', 'webvitals.lcp', 'webvitals.inp', 'webvitals.cls', 'webvitals.fcp', 'webvitals.ttfb', 'purchase_initiated'];
const ERRORS = ['error.unhandled', 'error.unhandledrejection', 'error.http', 'error.message'];
const FINGERPRINTS = Array.from({ length: 24 }, (_, i) => (0x1a2b3c00 + i * 7919).toString(16).padStart(8, '0').slice(-8));

/** One client's batch as JSON text split around the event-id marker (ids are filled in per request). */
function batchTemplate(client, startMs) {
  const anonymousId = `anon_${client.toString(36)}_${randomBytes(6).toString('hex')}`;
  const developerUserId = client % 3 === 0 ? `user_${client}` : undefined;
  const events = [];
  for (let i = 0; i < EVENTS_PER_BATCH; i++) {
    const page = PAGES[(client + i) % PAGES.length];
    const isError = i % 10 === 7;
    const name = i === 0 ? 'session.started' : isError ? ERRORS[i % ERRORS.length] : NAMES[(client * 7 + i) % NAMES.length];
    const properties = isError
      ? { fingerprint: FINGERPRINTS[(client + i) % FINGERPRINTS.length], message: `TypeError: Cannot read properties of undefined (reading 'price') at ${page}`, stack: `at renderPrice (app.js:1:${1000 + i})\nat updateCart (app.js:1:${2000 + i})`, url: `https://shop.example.com${page}` }
      : name.startsWith('webvitals.')
        ? { value: Math.round(((client * 31 + i * 17) % 4000) * 10) / 10, rating: i % 3 === 0 ? 'good' : 'needs-improvement', navigationType: 'navigate', path: page }
        : { path: page, title: `Example shop - ${page}`, referrer: 'https://www.google.com/', viewport: { w: 1440, h: 900 }, durationMs: 1200 + i };
    events.push({
      name,
      eventId: `${MARK}_${i}`,
      timestamp: startMs - (EVENTS_PER_BATCH - i) * 250,
      anonymousId,
      ...(developerUserId ? { developerUserId } : {}),
      ...(isError ? { level: 'error' } : {}),
      properties,
      tags: { release: '2026.11.3', locale: 'en-US', plan: client % 2 ? 'free' : 'pro' },
      categoryTags: isError ? ['frontend', 'checkout'] : ['web'],
      seq: i,
      context: { page: { url: `https://shop.example.com${page}` }, userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36' },
    });
  }
  const body = { appId: 'app_bench', environment: 'sandbox', sdk: { name: '@service/web', version: '1.6.0' }, envelopeVersion: 2, events };
  return JSON.stringify(body).split(MARK);
}

function bodySource() {
  const startMs = Date.now();
  const templates = Array.from({ length: 64 }, (_, client) => batchTemplate(client, startMs));
  const run = randomBytes(4).toString('hex');
  let counter = 0;
  return {
    next() {
      const n = counter++;
      return templates[n % templates.length].join(`${run}_${n.toString(36)}`);
    },
    sampleBytes: Buffer.byteLength(templates[0].join(`${run}_0`)),
  };
}

// ---- load ---------------------------------------------------------------------------------

function drive({ url, headers, connections, duration, bodies }) {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        method: 'POST',
        connections,
        duration,
        timeout: 10,
        headers: { 'content-type': 'application/json', ...headers },
        requests: [
          {
            setupRequest(request) {
              request.body = bodies.next();
              return request;
            },
          },
        ],
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
    autocannon.track(instance, { renderProgressBar: false, renderResultsTable: false, renderLatencyTable: false });
  });
}

/**
 * Open-loop load at a steady rate: request i is due at start + i / rate, whatever happened
 * before; latency is measured from that due time (so waiting for one of the `connections`
 * keep-alive sockets counts: no coordinated omission). autocannon's own overallRate is not
 * used here because it releases each connection's per-second quota at the start of every
 * second, i.e. it sends in bursts.
 */
async function paced({ url, headers, connections, duration, rate, bodies }) {
  const target = new URL(url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const latencies = [];
  let ok = 0;
  let non2xx = 0;
  let errors = 0;
  const interval = 1000 / rate;
  const total = Math.floor(rate * duration);
  const start = performance.now() + 20;
  const inFlight = [];
  const slow = [];
  for (let i = 0; i < total; i++) {
    const due = start + i * interval;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const body = bodies.next();
    inFlight.push(
      new Promise((resolve) => {
        const req = http.request(
          {
            host: target.hostname,
            port: target.port,
            path: target.pathname,
            method: 'POST',
            agent,
            headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
          },
          (res) => {
            res.resume();
            res.on('end', () => {
              latencies.push(performance.now() - due);
              if (process.env.BENCH_DEBUG) slow.push([performance.now() - due, due - start]);
              if (res.statusCode >= 200 && res.statusCode < 300) ok++;
              else non2xx++;
              resolve();
            });
          },
        );
        req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
        req.on('error', () => {
          errors++;
          resolve();
        });
        req.end(body);
      }),
    );
  }
  await Promise.all(inFlight);
  const elapsed = (performance.now() - start) / 1000;
  if (process.env.BENCH_DEBUG) {
    slow.sort((a, b) => b[0] - a[0]);
    log(`    slowest (ms @ ms into the phase): ${slow.slice(0, 30).map(([l, t]) => `${Math.round(l)}@${Math.round(t)}`).join(' ')}`);
  }
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q) => (latencies.length === 0 ? NaN : Math.round(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * q))] * 10) / 10);
  return {
    eventsPerSecond: Math.round((ok * EVENTS_PER_BATCH) / elapsed),
    batchesPerSecond: Math.round((ok / elapsed) * 10) / 10,
    p50: at(0.5),
    p99: at(0.99),
    max: at(1),
    non2xx,
    errors,
  };
}

function summarise(result) {
  const ok = result['2xx'];
  return {
    eventsPerSecond: Math.round((ok * EVENTS_PER_BATCH) / result.duration),
    batchesPerSecond: Math.round((ok / result.duration) * 10) / 10,
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

/** CPU seconds (user + system) a process has used so far (Linux /proc; null elsewhere). */
function cpuSeconds(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

/** CPU seconds per pid of the local processes named postgres (null where /proc is missing). */
function postgresCpu() {
  const byPid = new Map();
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        if (!stat.includes('(postgres)')) continue;
        const fields = stat.split(') ')[1].split(' ');
        byPid.set(entry, (Number(fields[11]) + Number(fields[12])) / 100);
      } catch {
        // exited meanwhile
      }
    }
  } catch {
    return null;
  }
  return byPid;
}

/** CPU seconds the postgres processes used between two snapshots (backends that exited in between are missed). */
function postgresCpuSeconds(before, after) {
  if (!before || !after || after.size === 0) return null;
  let total = 0;
  for (const [pid, seconds] of after) total += seconds - (before.get(pid) ?? 0);
  return total;
}

async function truncate(benchUrl) {
  const client = new pg.Client({ connectionString: benchUrl });
  await client.connect();
  try {
    // One table per statement: each takes one lock, so the API's background resolver
    // (hint set, then its events) cannot deadlock with it.
    for (const table of ['event_identity_hints', 'events', 'error_issues']) await client.query(`TRUNCATE ${table}`);
    await client.query('CHECKPOINT');
  } finally {
    await client.end();
  }
}

/** Closed loop, as fast as CONNECTIONS connections go, on an emptied table. */
async function saturate(server, benchUrl) {
  await truncate(benchUrl);
  const cpuBefore = cpuSeconds(server.pid);
  const pgBefore = postgresCpu();
  const selfBefore = process.cpuUsage();
  const run = await drive({ url: server.url, headers: server.headers, connections: CONNECTIONS, duration: DURATION, bodies: server.bodies });
  const selfCpu = process.cpuUsage(selfBefore);
  const cpuAfter = cpuSeconds(server.pid);
  const pgAfter = postgresCpu();
  const result = summarise(run);
  const perBatch = (seconds) => (seconds === null ? null : Math.round((seconds * 1000 * 100) / Math.max(1, run['2xx'])) / 100);
  result.cpuMsPerBatch = perBatch(cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore);
  result.pgCpuMsPerBatch = perBatch(postgresCpuSeconds(pgBefore, pgAfter));
  result.driverCpuMsPerBatch = perBatch((selfCpu.user + selfCpu.system) / 1e6);
  log(
    `  ${server.label.padEnd(9)} saturation ${String(result.eventsPerSecond).padStart(6)} events/s (${result.batchesPerSecond} batches/s), p50 ${result.p50} ms, p99 ${result.p99} ms, ` +
      `non-2xx ${result.non2xx}, errors ${result.errors}; CPU/batch: server ${result.cpuMsPerBatch ?? '?'} ms, postgres (all local) ${result.pgCpuMsPerBatch ?? '?'} ms, load generator ${result.driverCpuMsPerBatch} ms`,
  );
  return result;
}

/** Open loop at the target rate, on an emptied table. */
async function atTarget(server, benchUrl) {
  await truncate(benchUrl);
  const rate = Math.round(TARGET_EVENTS / EVENTS_PER_BATCH);
  const result = await paced({ url: server.url, headers: server.headers, connections: CONNECTIONS, duration: DURATION, rate, bodies: server.bodies });
  log(
    `  ${server.label.padEnd(9)} ${rate} batches/s  ${String(result.eventsPerSecond).padStart(6)} events/s, p50 ${result.p50} ms, p99 ${result.p99} ms, max ${result.max} ms, ` +
      `non-2xx ${result.non2xx}, errors ${result.errors}`,
  );
  return result;
}

const mean = (values) => Math.round(values.reduce((a, b) => a + b, 0) / Math.max(1, values.length));

async function main() {
  const dbName = `bench_${Date.now().toString(36)}_${process.pid}`;
  let benchUrl = withDatabase(adminUrl, dbName);
  let created = false;
  try {
    await adminQuery(`CREATE DATABASE "${dbName}"`);
    created = true;
  } catch (err) {
    log(`bench: cannot create a scratch database (${err.message}); using DATABASE_URL itself`);
    benchUrl = adminUrl;
  }
  const operatorToken = `op_bench_${randomBytes(16).toString('hex')}`;
  const logLevel = process.env.LOG_LEVEL ?? 'warn';
  try {
    log(`bench: ${os.cpus().length} CPU(s), node ${process.version}, ${CONNECTIONS} connections, ${DURATION} s per phase, LOG_LEVEL=${logLevel}`);

    // Both servers start now (each loads its code from dist/ at once); the baseline idles until its turn.
    const basePort = await freePort();
    const baseline = start('baseline', path.join(root, 'bench/baseline.mjs'), { DATABASE_URL: benchUrl, PORT: String(basePort), HOST: '127.0.0.1' }, process.env.BENCH_BASELINE_NODE_ARGS);

    // ---- the API ----
    const apiPort = await freePort();
    const api = start('api', apiEntry, {
      NODE_ENV: 'production',
      DATABASE_URL: benchUrl,
      PORT: String(apiPort),
      HOST: '127.0.0.1',
      OPERATOR_TOKEN: operatorToken,
      LOG_LEVEL: logLevel,
      TEST_CLOCK: 'off',
      MIGRATIONS_RUN: 'true',
    }, process.env.BENCH_API_NODE_ARGS);
    const apiBase = `http://127.0.0.1:${apiPort}`;
    try {
      await waitForHttp(baseline, `http://127.0.0.1:${basePort}/`);
      await waitForHttp(api, `${apiBase}/v1/healthz`);
      const project = await call(apiBase, 'POST', '/admin/v1/projects', operatorToken, { name: 'bench' });
      const app = await call(apiBase, 'POST', `/admin/v1/projects/${project.id}/apps`, operatorToken, { name: 'bench web', platform: 'web', allowedOrigins: [ORIGIN] });
      const key = app.keys.find((k) => k.kind === 'publishable' && k.env === 'sandbox').key;
      await call(apiBase, 'PUT', `/admin/v1/projects/${project.id}/rate-limits`, operatorToken, { events: { sustained: 1e6, burst: 1e7 } });
      const probe = await fetch(`${apiBase}/v1/events`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, Origin: ORIGIN, 'Content-Type': 'application/json' },
        body: bodySource().next(),
      });
      if (probe.status !== 202) throw new Error(`probe batch answered ${probe.status}: ${await probe.text()}`);

      const servers = [
        { label: 'api', url: `${apiBase}/v1/events`, headers: { authorization: `Bearer ${key}`, origin: ORIGIN }, pid: api.child.pid, bodies: bodySource() },
        { label: 'baseline', url: `http://127.0.0.1:${basePort}/v1/events`, headers: {}, pid: baseline.child.pid, bodies: bodySource() },
      ];
      log('');
      log('api      = POST /v1/events through the service (NestJS, key guard, validation, events bucket, one INSERT)');
      log('baseline = bench/baseline.mjs (node:http, JSON.parse, the same single INSERT)');
      for (const server of servers) await drive({ url: server.url, headers: server.headers, connections: CONNECTIONS, duration: WARMUP_SECONDS, bodies: server.bodies });

      log('');
      log(`Throughput: ${CONNECTIONS} connections, closed loop, ${ROUNDS} alternating round(s) of ${DURATION} s each:`);
      const saturation = { api: [], baseline: [] };
      for (let round = 0; round < ROUNDS; round++) {
        for (const server of round % 2 === 0 ? servers : [...servers].reverse()) saturation[server.label].push(await saturate(server, benchUrl));
      }
      log('');
      log(`Ack latency at ${TARGET_EVENTS} events/s (steady, open loop, ${CONNECTIONS} keep-alive connections, ${DURATION} s):`);
      const target = {};
      for (const server of servers) target[server.label] = await atTarget(server, benchUrl);

      const apiEvents = mean(saturation.api.map((r) => r.eventsPerSecond));
      const baseEvents = mean(saturation.baseline.map((r) => r.eventsPerSecond));
      const ratio = apiEvents / Math.max(1, baseEvents);
      const non2xx = (label) => saturation[label].reduce((n, r) => n + r.non2xx + r.errors, 0) + target[label].non2xx + target[label].errors;
      const check = (ok) => (ok ? 'ok  ' : 'MISS');
      log('');
      log(`Batch body: ${EVENTS_PER_BATCH} events, ~${Math.round(servers[0].bodies.sampleBytes / 1024)} KB`);
      log('Targets:');
      log(`  ${check(apiEvents >= TARGETS.eventsPerSecond)} throughput   ${apiEvents} events/s (mean of ${ROUNDS}; target >= ${TARGETS.eventsPerSecond})`);
      log(`  ${check(target.api.p99 < TARGETS.p99Ms)} p99 ack      ${target.api.p99} ms at ${TARGET_EVENTS} events/s from ${CONNECTIONS} connections (p50 ${target.api.p50} ms; target < ${TARGETS.p99Ms} ms)`);
      log(`  ${check(ratio >= TARGETS.ratio)} vs baseline  ${ratio.toFixed(2)} (${apiEvents} / ${baseEvents} events/s; target >= ${TARGETS.ratio})`);
      log(`  non-2xx/errors: api ${non2xx('api')}, baseline ${non2xx('baseline')}`);
    } finally {
      await stop(api);
      await stop(baseline);
    }
  } finally {
    if (created && !process.env.BENCH_KEEP_DB) await adminQuery(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`).catch(() => undefined);
  }
}

const cleanup = () => {
  for (const child of children) child.kill('SIGKILL');
};
process.once('SIGINT', () => {
  cleanup();
  process.exit(130);
});

if (process.argv[2] === '--sample-body') {
  // Prints one request body (to inspect what the benchmark sends).
  process.stdout.write(`${JSON.stringify(JSON.parse(batchTemplate(1, Date.now()).join('sample')), null, 2)}\n`);
} else {
  preflight();
  main().catch((err) => {
    process.stderr.write(`bench failed: ${err.stack ?? err}\n`);
    cleanup();
    process.exit(1);
  });
}

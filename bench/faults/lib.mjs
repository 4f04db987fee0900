// Shared helpers of the fault scripts (bench/faults/*.mjs): they start their own PostgreSQL
// (the embedded binaries, a development dependency) and Redis (redis-server from PATH) on
// free ports, never the shared servers, and the compiled API (npm run build first).
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { freePort, withClient } from '../lib/common.mjs';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Generated per run: production refuses a weak or example operator token. */
export const OPERATOR_TOKEN = `op_faults_${randomBytes(24).toString('hex')}`;
export const ORIGIN = 'http://faults.localhost';
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export const log = (line = '') => process.stdout.write(`${line}\n`);

const children = new Set();
const cleanups = [];
export function onCleanup(fn) {
  cleanups.push(fn);
}
export async function cleanup() {
  for (const child of children) child.kill('SIGKILL');
  for (const fn of cleanups.reverse()) await Promise.resolve(fn()).catch(() => undefined);
}
process.on('SIGINT', () => void cleanup().then(() => process.exit(130)));

export { freePort };

export function preflight() {
  if (!existsSync(path.join(root, 'dist/apps/api/src/main.js'))) {
    process.stderr.write('faults: run npm run build first\n');
    process.exit(2);
  }
}

/** The embedded PostgreSQL on a fixed port, so it can be stopped and started again where the API expects it. */
export async function startPostgres(port, dataDir) {
  const { startEmbeddedPostgres } = await import(path.join(root, 'dist/libs/platform/src/database/embedded-postgres.js'));
  return startEmbeddedPostgres({ dataDir, database: 'faults', port, durable: true });
}

export function removeDir(dir) {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * The run's own PostgreSQL: embedded, on a free port, migrated; stopped and its data removed
 * at cleanup. `stop()` and `start()` take it down and bring it back on the same port and data.
 */
export async function scratchPostgres() {
  const port = await freePort();
  const dataDir = path.join(root, `.data/faults-pg-${process.pid}`);
  onCleanup(() => removeDir(dataDir));
  let db = await startPostgres(port, dataDir);
  onCleanup(() => db?.stop());
  await migrate(db.url);
  return {
    port,
    url: db.url,
    async stop() {
      await db.stop();
      db = undefined;
    },
    async start() {
      db = await startPostgres(port, dataDir);
    },
  };
}

export async function startRedis(port) {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  children.add(child);
  child.on('exit', () => children.delete(child));
  for (let i = 0; i < 100; i++) {
    if (
      await new Promise((resolve) =>
        net
          .connect(port, '127.0.0.1')
          .on('connect', function () {
            this.destroy();
            resolve(true);
          })
          .on('error', () => resolve(false)),
      )
    )
      return child;
    await sleep(50);
  }
  throw new Error('redis-server did not start');
}

export function stopChild(child, signal = 'SIGTERM') {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve({ code: child.exitCode, signal: child.signalCode });
    child.once('exit', (code, sig) => resolve({ code, signal: sig }));
    child.kill(signal);
  });
}

export async function migrate(databaseUrl) {
  const child = spawn(process.execPath, ['dist/apps/api/src/migrate.js'], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const code = await new Promise((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`migrate failed: ${err}`);
}

export async function startApi(env) {
  const port = await freePort();
  const metricsPort = await freePort();
  const child = spawn(process.execPath, ['dist/apps/api/src/main.js'], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      PORT: String(port),
      METRICS_PORT: String(metricsPort),
      OPERATOR_TOKEN,
      MIGRATIONS_RUN: 'false',
      SEED_DEMO: 'false',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'fatal',
      ...env,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error('API exited during start-up');
    const res = await request(port, 'GET', '/v1/readyz').catch(() => undefined);
    if (res?.status === 200) return { child, port, metricsPort };
    await sleep(100);
  }
  throw new Error('API not ready after 60 s');
}

/** One HTTP request with a hard client-side bound, so a hang shows up as a timeout, not a stuck script. */
export function request(port, method, urlPath, { headers = {}, body, timeoutMs = 30_000 } = {}) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: urlPath,
        headers: { ...(data ? { 'content-type': 'application/json' } : {}), ...headers },
        agent: false,
        timeout: timeoutMs,
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => {
          let json;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode, body: json, text, ms: performance.now() - started });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(data);
  });
}

export async function operator(port, method, urlPath, body) {
  const res = await request(port, method, `/admin/v1${urlPath}`, { headers: { Authorization: `Bearer ${OPERATOR_TOKEN}` }, body });
  if (res.status >= 300) throw new Error(`${method} ${urlPath}: ${res.status} ${res.text}`);
  return res.body;
}

export async function project(port, rateLimits) {
  const { id: projectId } = await operator(port, 'POST', '/projects', { name: 'Faults' });
  if (rateLimits) await operator(port, 'PUT', `/projects/${projectId}/rate-limits`, rateLimits);
  const app = await operator(port, 'POST', `/projects/${projectId}/apps`, { name: 'Web', platform: 'web', allowedOrigins: [ORIGIN] });
  return { projectId, publishable: app.keys.find((k) => k.kind === 'publishable' && k.env === 'sandbox').key };
}

let counter = 0;
/** One single-event batch; resolves with status (0 = connection error), eventId and duration. */
export function sendEvent(port, key) {
  const eventId = `evt_fault_${process.pid}_${(counter += 1)}`;
  const started = performance.now();
  return request(port, 'POST', '/v1/events', {
    headers: { Authorization: `Bearer ${key}`, Origin: ORIGIN },
    body: { events: [{ name: 'fault.test', eventId, anonymousId: 'anon_faults' }] },
  }).then(
    (res) => ({ ...res, eventId }),
    (err) => ({ status: 0, error: String(err.message ?? err), eventId, ms: performance.now() - started }),
  );
}

/** Closed-loop load from `workers` concurrent clients until stop(); every result is kept with its time. */
export function load(port, key, workers = 8) {
  const results = [];
  let stopped = false;
  const run = async () => {
    while (!stopped) {
      const at = Date.now();
      const result = await sendEvent(port, key);
      results.push({ ...result, at });
      if (result.status !== 202) await sleep(20); // no busy loop against a refusing server
    }
  };
  const running = Array.from({ length: workers }, run);
  return {
    results,
    stop: async () => {
      stopped = true;
      await Promise.all(running);
    },
  };
}

export async function storedEventIds(databaseUrl, projectId, eventIds) {
  const { rows } = await withClient(databaseUrl, (client) =>
    client.query('SELECT event_id FROM events WHERE project_id = $1 AND event_id = ANY($2::text[])', [projectId, eventIds]),
  );
  return new Set(rows.map((r) => r.event_id));
}

export async function scrape(metricsPort) {
  return (await request(metricsPort, 'GET', '/metrics')).text;
}

export function sample(body, name, labels = {}) {
  let total;
  for (const line of body.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) total = (total ?? 0) + Number(match[3]);
  }
  return total ?? 0;
}

export function summarize(results) {
  const byStatus = {};
  for (const r of results) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
  const maxMs = Math.max(0, ...results.map((r) => r.ms ?? 0));
  return { count: results.length, byStatus, maxMs: Math.round(maxMs) };
}

export class Checks {
  failures = [];
  check(ok, what) {
    log(`  ${ok ? 'ok  ' : 'FAIL'} ${what}`);
    if (!ok) this.failures.push(what);
  }

  /** The no-loss check: every event the API acknowledged with 202 is in the database. */
  async acknowledgedAreStored(results, databaseUrl, projectId) {
    const acknowledged = results.filter((r) => r.status === 202).map((r) => r.eventId);
    const stored = await storedEventIds(databaseUrl, projectId, acknowledged);
    this.check(
      acknowledged.every((id) => stored.has(id)),
      `every acknowledged event is stored (${stored.size}/${acknowledged.length})`,
    );
  }

  /** Runs a fault script's `main`, then cleans up and exits 1 when a check failed (or `main` threw). */
  run(name, main) {
    main()
      .catch((err) => {
        this.failures.push(String(err?.stack ?? err));
        log(String(err?.stack ?? err));
      })
      .finally(async () => {
        await cleanup();
        log(this.failures.length === 0 ? `${name}: all checks passed` : `${name}: ${this.failures.length} check(s) failed`);
        process.exit(this.failures.length === 0 ? 0 : 1);
      });
  }
}

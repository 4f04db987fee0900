/* global process, fetch, setTimeout, URL */
// npm run test:replicas: two replicas of the built service (dist/) on their own ports over one
// PostgreSQL (a throw-away database on DATABASE_URL's server) and one Redis (REDIS_URL), and
// what several replicas must guarantee, with assertions:
//   - token buckets are global (the sum admitted across both respects the bucket);
//   - a key revoked through one replica is refused by the other within KEY_CACHE_TTL_MS;
//   - an Idempotency-Key used on both replicas at once executes once (purchase sync with a JWS
//     signed by a generated store chain, trusted through the operator API);
//   - each background job item is processed once while both replicas' job workers poll (erasures,
//     the revenue lapse scan, the error revenue refresh, webhook deliveries, reads at expiry, the
//     hourly read of each project's voided Play purchases);
//   - a rolling restart of both replicas under load loses no acknowledged event;
//   - an API replica with BACKGROUND_JOBS=disabled leaves jobs and deliveries to a job runner.
// The replicas run with NODE_ENV=production, as deployed: their job workers poll every second.
// Run with node's test runner (`node --test test/replicas/`); needs DATABASE_URL and REDIS_URL.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createHmac, generateKeyPairSync, randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { Buffer } from 'node:buffer';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const DIST = `.data/replicas-dist-${process.pid}`;
const SIGNING = `.data/replicas-signing-${process.pid}`;
const BUNDLE_ID = 'com.example.replicas';
// Production refuses placeholder-looking secrets, so the replicas get generated ones.
const OPERATOR_TOKEN = `op_${randomBytes(24).toString('base64url')}`;
const WEBHOOK_SIGNING_KEY = randomBytes(32).toString('base64');
const KEY_CACHE_TTL_MS = 2000;
const ORIGIN = 'http://localhost:3000';

const adminUrl = process.env.DATABASE_URL;
const redisUrl = process.env.REDIS_URL;
if (!adminUrl || !redisUrl) {
  process.stderr.write('test:replicas needs DATABASE_URL (a PostgreSQL server) and REDIS_URL\n');
  process.exit(1);
}
if (!existsSync(path.join(ROOT, 'dist/apps/api/src/main.js'))) {
  process.stderr.write('test:replicas runs the built service: npm run build first\n');
  process.exit(1);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const database = `replicas_${Date.now().toString(36)}_${process.pid}`;
const url = new URL(adminUrl);
url.pathname = `/${database}`;
const databaseUrl = url.toString();

const running = new Set();

function runNode(args, env) {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: stopped by group in after(), whatever it started goes with it.
    detached: true,
  });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exit = new Promise((resolve) => child.on('close', (code, signal) => (running.delete(child), resolve({ code, signal }))));
  return { child, exit, stdout: () => stdout, stderr: () => stderr };
}

/** One replica: the built service on `port`, sharing the database and Redis with the others. */
async function startReplica(port, extraEnv = {}) {
  const replica = runNode([`${DIST}/apps/api/src/main.js`], {
    NODE_ENV: 'production',
    WEBHOOK_SIGNING_KEY,
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    OPERATOR_TOKEN,
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    MIGRATIONS_RUN: 'false',
    METRICS_PORT: '0',
    SEED_DEMO: 'false',
    LOG_LEVEL: 'warn',
    KEY_CACHE_TTL_MS: String(KEY_CACHE_TTL_MS),
    SHUTDOWN_DELAY_MS: '1000',
    // These tests prove that buckets are global, not that they fail open (the unit and fault
    // tests do): a busy CI machine must not turn a slow Redis answer into an admitted request.
    REDIS_COMMAND_TIMEOUT_MS: '2000',
    ...extraEnv,
  });
  replica.port = port;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (replica.child.exitCode !== null) throw new Error(`replica on ${port} exited: ${replica.stderr()}`);
    const res = await fetch(`http://127.0.0.1:${port}/v1/readyz`).catch(() => undefined);
    if (res?.status === 200) return replica;
    if (Date.now() > deadline) throw new Error(`replica on ${port} not ready: ${replica.stderr()}`);
    await sleep(100);
  }
}

async function operator(port, method, urlPath, body) {
  const res = await fetch(`http://127.0.0.1:${port}/admin/v1${urlPath}`, {
    method,
    headers: { Authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  assert.ok(res.status < 300, `${method} ${urlPath}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** A project with a web app and its keys; rate-limit overrides set before any replica caches the project. */
async function project(port, rateLimits) {
  const { id: projectId } = await operator(port, 'POST', '/projects', { name: 'Replicas' });
  if (rateLimits) await operator(port, 'PUT', `/projects/${projectId}/rate-limits`, rateLimits);
  const app = await operator(port, 'POST', `/projects/${projectId}/apps`, { name: 'Web', platform: 'web', allowedOrigins: [ORIGIN] });
  const key = (kind, env) => app.keys.find((k) => k.kind === kind && k.env === env);
  return { projectId, publishable: key('publishable', 'sandbox').key, secret: key('secret', 'sandbox') };
}

let counter = 0;
function sendEvent(port, publishableKey) {
  const eventId = `evt_${process.pid}_${(counter += 1)}_${Math.random().toString(36).slice(2)}`;
  return fetch(`http://127.0.0.1:${port}/v1/events`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${publishableKey}`, Origin: ORIGIN, 'content-type': 'application/json' },
    body: JSON.stringify({ events: [{ name: 'replica.test', eventId, anonymousId: 'anon_replicas' }] }),
  }).then(
    async (res) => ({ status: res.status, body: await res.json().catch(() => undefined), eventId }),
    (err) => ({ status: 0, error: err, eventId }),
  );
}

/** A migrated database of a describe's own beside the shared one (`<shared>_<suffix>`); `drop()` removes it. */
function ownDatabase(suffix) {
  const name = `${database}_${suffix}`;
  const ownUrl = new URL(adminUrl);
  ownUrl.pathname = `/${name}`;
  const withAdmin = async (work) => {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    try {
      await work(admin);
    } finally {
      await admin.end();
    }
  };
  return {
    url: ownUrl.toString(),
    async create() {
      await withAdmin((admin) => admin.query(`CREATE DATABASE "${name}"`));
      const migrate = runNode([`${DIST}/apps/api/src/migrate.js`], { DATABASE_URL: ownUrl.toString() });
      const { code } = await migrate.exit;
      assert.equal(code, 0, migrate.stderr());
    },
    drop: () => withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => undefined)),
  };
}

let replicas = [];
/** test/support/store-signing.ts, compiled by a small build step in before(). */
let signing;

/** test/support/store-signing.ts compiled on its own (the test chain and JWS signer of the e2e specs). */
async function buildSigning() {
  const tsc = runNode(
    [
      'node_modules/typescript/bin/tsc',
      '--ignoreConfig',
      'test/support/store-signing.ts',
      '--outDir',
      SIGNING,
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2022',
      '--skipLibCheck',
      '--types',
      'node',
      '--esModuleInterop',
    ],
    {},
  );
  const { code } = await tsc.exit;
  assert.equal(code, 0, tsc.stdout() + tsc.stderr());
  return import(pathToFileURL(path.join(ROOT, SIGNING, 'store-signing.js')).href);
}

before(async () => {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${database}"`);
  await admin.end();
  cpSync(path.join(ROOT, 'dist'), path.join(ROOT, DIST), { recursive: true });
  const migrate = runNode([`${DIST}/apps/api/src/migrate.js`], { DATABASE_URL: databaseUrl });
  const { code } = await migrate.exit;
  assert.equal(code, 0, migrate.stderr());
  [signing, replicas] = await Promise.all([buildSigning(), Promise.all([startReplica(await freePort()), startReplica(await freePort())])]);
});

after(async () => {
  for (const child of running) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // the group is gone
    }
  }
  rmSync(path.join(ROOT, DIST), { recursive: true, force: true });
  rmSync(path.join(ROOT, SIGNING), { recursive: true, force: true });
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).catch(() => undefined);
  await admin.end();
});

describe('two replicas over one PostgreSQL and one Redis', () => {
  it('token buckets are global: the sum admitted across both replicas respects the bucket', async () => {
    const burst = 20;
    const p = await project(replicas[0].port, { events: { sustained: 1, burst } });
    // Both replicas first authenticate the key and load the project's buckets (a heartbeat
    // charges its own bucket), so neither starts the burst later for a cold cache and leaves
    // every token to the other.
    for (const replica of replicas) {
      const res = await fetch(`http://127.0.0.1:${replica.port}/v1/sdk/heartbeat`, { headers: { Authorization: `Bearer ${p.publishable}`, Origin: ORIGIN } });
      assert.equal(res.status, 200);
    }
    // Nor for a cold events path: the second replica has served nothing but a heartbeat, and
    // on a busy CI machine one replica once admitted none of the burst (the other took it
    // all), most likely for that. One event through each replica under another project warms
    // the path without touching this bucket.
    const warm = await project(replicas[0].port);
    for (const replica of replicas) assert.equal((await sendEvent(replica.port, warm.publishable)).status, 202);
    const started = Date.now();
    // 60 single-event batches, alternating replicas, all at once.
    const results = await Promise.all(Array.from({ length: 60 }, (_, i) => sendEvent(replicas[i % 2].port, p.publishable)));
    const elapsedS = (Date.now() - started) / 1000;
    const admitted = results.filter((r) => r.status === 202).length;
    const limited = results.filter((r) => r.status === 429).length;
    assert.equal(admitted + limited, 60, JSON.stringify(results.filter((r) => r.status !== 202 && r.status !== 429).slice(0, 3)));
    // Per-replica buckets would admit up to 2 × burst; a global one admits burst plus the refill.
    assert.ok(admitted <= burst + Math.ceil(elapsedS) + 1, `admitted ${admitted} of 60 with a burst of ${burst} in ${elapsedS}s`);
    assert.ok(admitted >= burst, `admitted ${admitted}`);
    // Both replicas admitted some and limited some: they drew from the same bucket.
    const admittedBy = [0, 1].map((side) => results.filter((r, i) => i % 2 === side && r.status === 202).length);
    assert.ok(admittedBy[0] > 0 && admittedBy[1] > 0, `admitted per replica: ${admittedBy.join(' / ')}`);
  });

  it('a key revoked through one replica is refused by the other within KEY_CACHE_TTL_MS', async () => {
    const p = await project(replicas[0].port);
    const heartbeat = (port) => fetch(`http://127.0.0.1:${port}/v1/sdk/heartbeat`, { headers: { 'Service-Api-Key': p.secret.key } });
    assert.equal((await heartbeat(replicas[1].port)).status, 200); // cached on replica B
    await operator(replicas[0].port, 'POST', `/keys/${p.secret.id}/revoke`);
    assert.equal((await heartbeat(replicas[0].port)).status, 401); // at once where it was revoked
    await sleep(KEY_CACHE_TTL_MS + 250);
    const res = await heartbeat(replicas[1].port);
    assert.equal(res.status, 401);
    assert.equal((await res.json()).error.code, 'key_revoked');
  });

  it('an Idempotency-Key used on both replicas at once executes once', async () => {
    const port = replicas[0].port;
    const { id: projectId } = await operator(port, 'POST', '/projects', { name: 'Replicas idempotency' });
    await operator(port, 'PUT', `/projects/${projectId}/rate-limits`, { purchases: { sustained: 1000, burst: 1000 } });
    const app = await operator(port, 'POST', `/projects/${projectId}/apps`, { name: 'iOS', platform: 'ios', bundleId: BUNDLE_ID });
    const publishable = app.keys.find((k) => k.kind === 'publishable' && k.env === 'sandbox').key;
    const chain = signing.createStoreChain();
    await operator(port, 'PUT', `/projects/${projectId}/rails/ios_store`, { bundleId: BUNDLE_ID, trustedRootCertificates: [chain.rootPem] });
    await operator(port, 'PUT', `/projects/${projectId}/products`, { products: [{ rail: 'ios_store', productId: 'pro.monthly', entitlementKeys: ['pro'] }] });
    const nowMs = Date.now();
    const payload = signing.transactionPayload({ bundleId: BUNDLE_ID, productId: 'pro.monthly', signedDate: nowMs, expiresDate: nowMs + 3600_000 });
    const body = JSON.stringify({ rail: 'ios_store', signedTransactionInfo: signing.signStoreJws(chain, payload) });
    const key = `idem_replicas_${process.pid}_${Date.now()}`;
    // 12 requests with one key, alternating replicas, all at once.
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        fetch(`http://127.0.0.1:${replicas[i % 2].port}/v1/purchases/sync`, {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${publishable}`,
            'X-Service-Bundle-Id': BUNDLE_ID,
            'Idempotency-Key': key,
            'content-type': 'application/json',
          },
          body,
        }).then(async (res) => ({ status: res.status, replayed: res.headers.get('idempotent-replayed'), body: await res.json() })),
      ),
    );
    assert.deepEqual(
      results.map((r) => r.status),
      Array(12).fill(200),
      JSON.stringify(results.find((r) => r.status !== 200)?.body),
    );
    assert.equal(results.filter((r) => r.replayed !== 'true').length, 1, 'exactly one request executed, the others replayed it');
    const first = results.find((r) => r.replayed !== 'true').body;
    for (const r of results.filter((r) => r.replayed === 'true')) assert.deepEqual(r.body, { ...first, idempotent_replay: true });
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query(`SELECT count(*)::int AS n FROM audit_entries WHERE project_id = $1 AND details->>'transactionId' = $2`, [
        projectId,
        payload.transactionId,
      ]);
      assert.equal(rows[0].n, 1, 'one audit entry: the purchase was applied once');
    } finally {
      await client.end();
    }
  });

  it('each background job item is processed once while both replicas poll', async () => {
    const p = await project(replicas[0].port, { forget: { sustained: 1000, burst: 1000 } });
    const headers = { Authorization: `Bearer ${p.secret.key}`, 'content-type': 'application/json' };
    const COUNT = 96;
    // Identify COUNT customers, then forget them all through both replicas, 8 at a time, so
    // both replicas' workers find erasure jobs on their ticks.
    const inChunks = async (count, work) => {
      const out = [];
      for (let i = 0; i < count; i += 8) out.push(...(await Promise.all(Array.from({ length: Math.min(8, count - i) }, (_, j) => work(i + j)))));
      return out;
    };
    const customers = await inChunks(COUNT, async (i) => {
      const res = await fetch(`http://127.0.0.1:${replicas[i % 2].port}/v1/identify`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ userId: `replica_user_${i}`, anonymousId: `replica_anon_${i}` }),
      });
      const text = await res.text();
      assert.equal(res.status, 200, text);
      return JSON.parse(text).serviceCustomerId;
    });
    const forgets = await inChunks(COUNT, (i) =>
      fetch(`http://127.0.0.1:${replicas[i % 2].port}/v1/identity/forget`, { method: 'POST', headers, body: JSON.stringify({ customerId: customers[i] }) }),
    );
    assert.deepEqual(
      forgets.map((r) => r.status),
      Array(COUNT).fill(200),
    );
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const jobs = async () =>
        (
          await client.query(
            `SELECT payload->>'customerId' AS "customerId", status, attempts, leased_by AS "leasedBy" FROM jobs WHERE project_id = $1 AND type = 'identity.erase_customer'`,
            [p.projectId],
          )
        ).rows;
      const deadline = Date.now() + 60_000;
      let rows = await jobs();
      while (rows.some((r) => r.status !== 'done') && Date.now() < deadline) {
        await sleep(250);
        rows = await jobs();
      }
      assert.equal(rows.length, COUNT, 'one job per customer');
      const byWorker = {};
      for (const r of rows) byWorker[r.leasedBy] = (byWorker[r.leasedBy] ?? 0) + 1;
      process.stdout.write(`# erasure jobs per worker lease: ${JSON.stringify(Object.values(byWorker))}\n`);
      assert.deepEqual(
        rows.filter((r) => r.status !== 'done' || r.attempts !== 1),
        [],
        'every job done on its first attempt: claimed once',
      );
      const erasures = await client.query(`SELECT customer_id, status, attempts FROM erasures WHERE project_id = $1`, [p.projectId]);
      assert.equal(erasures.rows.length, COUNT);
      assert.deepEqual(
        erasures.rows.filter((r) => r.status !== 'deleted' || r.attempts !== 0),
        [],
        'every erasure deleted, no failed attempt recorded',
      );
    } finally {
      await client.end();
    }
  });

  it('the revenue lapse scan lapses each subscription once while both replicas run it', async () => {
    const p = await project(replicas[0].port);
    const COUNT = 120;
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      // COUNT customers each paying 10.00 a month through a card subscription whose period ended
      // two days ago, and one whose period runs on: the ledger's rows as the rails would leave them.
      const id = `'cdcust_lapse_' || g`;
      const seed = [p.projectId, COUNT + 1];
      await client.query(
        `INSERT INTO customers (id, project_id, env, created_at, updated_at) SELECT ${id}, $1, 'sandbox', now(), now() FROM generate_series(1, $2) g`,
        seed,
      );
      await client.query(
        `INSERT INTO revenue_subscriptions (project_id, env, rail, subscription_id, customer_id, active, currency, monthly_minor, updated_at, valid_until)
         SELECT $1, 'sandbox', 'card_payments', 'sub_lapse_' || g, ${id}, true, 'USD', 1000, now(),
                CASE WHEN g = $2 THEN now() + interval '20 days' ELSE now() - interval '2 days' END
           FROM generate_series(1, $2) g`,
        seed,
      );
      await client.query(
        `INSERT INTO revenue_customers (project_id, env, customer_id, rail, currency, monthly_minor, subscriptions)
         SELECT $1, 'sandbox', ${id}, 'card_payments', 'USD', 1000, 1 FROM generate_series(1, $2) g`,
        seed,
      );
      await client.query(
        `INSERT INTO revenue_customer_totals (project_id, env, customer_id, currency, monthly_minor) SELECT $1, 'sandbox', ${id}, 'USD', 1000 FROM generate_series(1, $2) g`,
        seed,
      );
      await client.query(
        `INSERT INTO revenue_totals (project_id, env, rail, currency, mrr_minor, paying_customers)
         VALUES ($1, 'sandbox', 'all', 'USD', $2 * 1000, $2), ($1, 'sandbox', 'all', '*', 0, $2),
                ($1, 'sandbox', 'card_payments', 'USD', $2 * 1000, $2), ($1, 'sandbox', 'card_payments', '*', 0, $2)`,
        seed,
      );
      const active = async () =>
        Number((await client.query(`SELECT count(*) AS n FROM revenue_subscriptions WHERE project_id = $1 AND active`, [p.projectId])).rows[0].n);
      // The scan runs every 15 s on one replica at a time.
      const deadline = Date.now() + 60_000;
      while ((await active()) > 1 && Date.now() < deadline) await sleep(500);
      assert.equal(await active(), 1, 'every lapsed subscription inactive, the running one still active');
      const totals = (
        await client.query(
          `SELECT rail, currency, mrr_minor::float8 AS mrr, paying_customers AS paying FROM revenue_totals WHERE project_id = $1 ORDER BY rail, currency`,
          [p.projectId],
        )
      ).rows;
      assert.deepEqual(totals, [
        { rail: 'all', currency: '*', mrr: 0, paying: 1 },
        { rail: 'all', currency: 'USD', mrr: 1000, paying: 1 },
        { rail: 'card_payments', currency: '*', mrr: 0, paying: 1 },
        { rail: 'card_payments', currency: 'USD', mrr: 1000, paying: 1 },
      ]);
      const left = await client.query(`SELECT count(*)::int AS n FROM revenue_customers WHERE project_id = $1`, [p.projectId]);
      assert.equal(left.rows[0].n, 1, 'one customer row left');
    } finally {
      await client.end();
    }
  });

  it('the error revenue refresh keeps a read snapshot fresh: one replica works it out before it ages, no read waits for it', async () => {
    const p = await project(replicas[0].port);
    const fingerprint = `ab${process.pid.toString(16).padStart(6, '0').slice(-6)}`;
    const customers = {};
    for (const userId of ['u_one', 'u_two']) {
      const res = await fetch(`http://127.0.0.1:${replicas[0].port}/v1/identify`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${p.secret.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ userId, anonymousId: `anon_${userId}_${process.pid}` }),
      });
      customers[userId] = (await res.json()).serviceCustomerId;
    }
    const sent = await fetch(`http://127.0.0.1:${replicas[0].port}/v1/events`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${p.secret.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        events: ['u_one', 'u_two'].map((userId) => ({
          name: 'error.unhandled',
          eventId: `err_${userId}_${process.pid}`,
          developerUserId: userId,
          anonymousId: `anon_${userId}_${process.pid}`,
          level: 'error',
          properties: { fingerprint, message: 'boom', errorType: 'TypeError' },
        })),
      }),
    });
    assert.equal(sent.status, 202);
    await operator(replicas[0].port, 'PUT', `/projects/${p.projectId}/rails/card_payments`, {});
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const pay = (userId) =>
        client.query(`INSERT INTO revenue_customer_totals (project_id, env, customer_id, currency, monthly_minor) VALUES ($1, 'sandbox', $2, 'USD', 1000)`, [
          p.projectId,
          customers[userId],
        ]);
      const paying = async (replica) => {
        const res = await fetch(`http://127.0.0.1:${replica.port}/v1/errors?fingerprint=${fingerprint}`, {
          headers: { Authorization: `Bearer ${p.secret.key}` },
        });
        assert.equal(res.status, 200);
        return (await res.json()).data?.affected.payingUsers;
      };
      const snapshot = async () =>
        (
          await client.query(
            `SELECT computed_at_ms::float8 AS computed, read_at_ms::float8 AS read FROM error_revenue_snapshots WHERE project_id = $1 AND fingerprint = $2`,
            [p.projectId, fingerprint],
          )
        ).rows[0];
      await pay('u_one');
      // The events are written by the group commit: the first read once both users count.
      const written = Date.now() + 10_000;
      while ((await paying(replicas[0])) !== 1 && Date.now() < written) await sleep(200);
      assert.equal(await paying(replicas[0]), 1);
      const first = await snapshot();
      await pay('u_two');
      // Kept at most 60 s old: the job (every 10 s, on one replica at a time) works it out again once it is 30 s old.
      const deadline = Date.now() + 60_000;
      while ((await paying(replicas[1])) !== 2 && Date.now() < deadline) await sleep(1_000);
      assert.equal(await paying(replicas[1]), 2);
      const refreshed = await snapshot();
      assert.ok(refreshed.computed > first.computed, 'worked out again');
      // No read worked it out (a read that does moves the read time): the job did.
      assert.equal(refreshed.read, first.read);
      const runs = await client.query(`SELECT count(*)::int AS n FROM jobs WHERE type = 'reporting.refresh_error_revenue' AND status = 'done'`);
      assert.ok(runs.rows[0].n >= 3, `${runs.rows[0].n} runs`);
    } finally {
      await client.end();
    }
  });

  it('a rolling restart of both replicas under load loses no acknowledged event and exits 0', async () => {
    const p = await project(replicas[0].port, { events: { sustained: 100_000, burst: 100_000 } });
    const acknowledged = [];
    const failures = [];
    let stop = false;
    // A client behind a load balancer: round-robin over replicas that answer readiness;
    // a request refused at the connection is retried on the other replica.
    const ready = new Map(replicas.map((r) => [r.port, true]));
    const ports = replicas.map((r) => r.port);
    const watcher = (async () => {
      while (!stop) {
        for (const port of ports) {
          const res = await fetch(`http://127.0.0.1:${port}/v1/readyz`).catch(() => undefined);
          ready.set(port, res?.status === 200);
        }
        await sleep(100);
      }
    })();
    const worker = async (offset) => {
      let i = offset;
      while (!stop) {
        const candidates = ports.filter((port) => ready.get(port));
        const port = (candidates.length ? candidates : ports)[i++ % (candidates.length || ports.length)];
        const result = await sendEvent(port, p.publishable);
        if (result.status === 202) acknowledged.push(result.eventId);
        else if (result.status !== 0) failures.push(result);
      }
    };
    const workers = Array.from({ length: 4 }, (_, i) => worker(i));
    for (let index = 0; index < replicas.length; index++) {
      await sleep(1000);
      const old = replicas[index];
      old.child.kill('SIGTERM');
      const { code, signal } = await old.exit;
      assert.deepEqual({ code, signal }, { code: 0, signal: null }, old.stderr());
      replicas[index] = await startReplica(old.port);
    }
    await sleep(1000);
    stop = true;
    await Promise.all([...workers, watcher]);
    assert.deepEqual(
      failures.map((f) => f.status),
      [],
      JSON.stringify(failures.slice(0, 3).map((f) => f.body)),
    );
    assert.ok(acknowledged.length > 50, `only ${acknowledged.length} events acknowledged`);
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT event_id FROM events WHERE project_id = $1 AND event_id = ANY($2::text[])', [p.projectId, acknowledged]);
      const stored = new Set(rows.map((r) => r.event_id));
      const lost = acknowledged.filter((id) => !stored.has(id));
      assert.deepEqual(lost, [], `${lost.length} of ${acknowledged.length} acknowledged events are missing`);
    } finally {
      await client.end();
    }
  });
});

describe('outbound webhooks with two replicas', () => {
  // Local receivers need WEBHOOKS_ALLOW_PRIVATE, which production refuses: two development replicas of their own.
  // A database of its own: the production replicas would refuse the local receiver's address
  // and schedule retries of these deliveries.
  const own = ownDatabase('webhooks');
  const DEV = { NODE_ENV: 'development', WEBHOOKS_ALLOW_PRIVATE: 'true', DATABASE_URL: own.url };
  let pair = [];
  let server;
  const received = [];
  let hold = false;
  let base = '';

  before(async () => {
    server = http.createServer((req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        if (hold) return;
        received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        res.writeHead(204).end();
      });
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${server.address().port}`;
    await own.create();
    pair = await Promise.all([startReplica(await freePort(), DEV), startReplica(await freePort(), DEV)]);
  });
  after(async () => {
    for (const replica of pair) replica.child.kill('SIGKILL');
    await Promise.all(pair.map((replica) => replica.exit));
    server.closeAllConnections();
    server.close();
    await own.drop();
  });

  const waitFor = async (predicate, timeoutMs) => {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      assert.ok(Date.now() < deadline, `not met in ${timeoutMs} ms (${received.length} received)`);
      await sleep(50);
    }
  };

  it('each attempt is delivered once while both replicas dispatch', async () => {
    const p = await project(pair[0].port);
    const endpoint = await operator(pair[0].port, 'POST', `/projects/${p.projectId}/webhook-endpoints`, { url: `${base}/once`, env: 'sandbox' });
    const COUNT = 60;
    const ids = [];
    for (let i = 0; i < COUNT; i += 6) {
      const batch = await Promise.all(Array.from({ length: 6 }, (_, j) => operator(pair[(i + j) % 2].port, 'POST', `/webhook-endpoints/${endpoint.id}/test`)));
      ids.push(...batch.map((d) => d.eventId));
    }
    await waitFor(() => ids.every((id) => received.some((e) => e.id === id)), 30_000);
    await sleep(1_500); // a duplicate would arrive within the replicas' next polls
    const mine = received.filter((e) => ids.includes(e.id));
    assert.equal(mine.length, COUNT);
    assert.equal(new Set(mine.map((e) => e.id)).size, COUNT);
  });

  it("an endpoint created on one replica receives the other's change committed right after the answer", async () => {
    const p = await project(pair[0].port);
    const identified = await fetch(`http://127.0.0.1:${pair[1].port}/v1/identify`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${p.publishable}`, Origin: ORIGIN, 'content-type': 'application/json' },
      body: JSON.stringify({ userId: `presence_${process.pid}`, anonymousId: `presence_anon_${process.pid}` }),
    }).then((res) => res.json());
    const customerId = identified.serviceCustomerId;
    const grant = async (entitlementKey) => {
      const res = await fetch(`http://127.0.0.1:${pair[1].port}/v1/server/customers/${customerId}/grant`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${p.secret.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ entitlementKey, duration: 'P30D', reason: 'Replicas presence check grant' }),
      });
      assert.equal(res.status, 200, JSON.stringify(await res.json()));
    };
    // Replica 1 reads "no endpoint" for the scope and keeps the answer briefly; replica 0 then creates one.
    await grant('before_endpoint');
    await operator(pair[0].port, 'POST', `/projects/${p.projectId}/webhook-endpoints`, {
      url: `${base}/presence`,
      env: 'sandbox',
      eventTypes: ['customer.entitlements.updated'],
    });
    await grant('after_endpoint');
    const mine = () => received.filter((e) => e.data?.serviceCustomerId === customerId);
    await waitFor(() => mine().length >= 1, 30_000);
    await sleep(1_500);
    assert.deepEqual(
      mine().map((e) => e.data.changes.map((c) => c.key)),
      [['after_endpoint']],
    );
  });

  it('a delivery in flight when its replica is killed is delivered by the other', async () => {
    const p = await project(pair[0].port);
    const endpoint = await operator(pair[0].port, 'POST', `/projects/${p.projectId}/webhook-endpoints`, { url: `${base}/held`, env: 'sandbox' });
    hold = true;
    const delivery = await operator(pair[0].port, 'POST', `/webhook-endpoints/${endpoint.id}/test`);
    await sleep(1_500);
    pair[0].child.kill('SIGKILL');
    hold = false;
    // The killed replica's lease runs out (30 s), or the survivor's held attempt times out (10 s) and is retried 10 s later.
    await waitFor(() => received.some((e) => e.id === delivery.eventId), 60_000);
  });
});

describe('reads at expiry with two replicas', () => {
  // A local card-processor API needs a development replica (CARD_PAYMENTS_API_BASE_URL over http).
  const DEV = { NODE_ENV: 'development' };
  const WEBHOOK_SECRET = 'whsec_replicas_expiry_0123456789abcdef';
  const COUNT = 40;
  let pair = [];
  let processor;
  let secretsDir;
  /** Reads of each subscription the processor answered: GET /v1/subscriptions/{id}, or the customer's listing. */
  const reads = new Map();
  const subscriptions = new Map();
  const own = ownDatabase('expiry');

  before(async () => {
    processor = http.createServer((req, res) => {
      const url = new URL(req.url, 'http://processor');
      const byId = url.pathname.match(/^\/v1\/subscriptions\/([^/]+)$/);
      const customer = url.searchParams.get('customer');
      const sub = byId ? subscriptions.get(byId[1]) : [...subscriptions.values()].find((s) => s.customer === customer);
      const customerPath = url.pathname.match(/^\/v1\/customers\/([^/]+)$/);
      res.setHeader('content-type', 'application/json');
      if (customerPath) return res.end(JSON.stringify({ id: customerPath[1], object: 'customer' }));
      if (!sub)
        return res.writeHead(404).end(JSON.stringify({ error: { type: 'invalid_request_error', code: 'resource_missing', message: 'No such object' } }));
      reads.set(sub.id, (reads.get(sub.id) ?? 0) + 1);
      // The renewal the notification never brought: active until a month from now.
      const renewed = { ...sub, current_period_end: Math.floor(Date.now() / 1000) + 30 * 86400 };
      renewed.items = { object: 'list', data: [{ ...sub.items.data[0], current_period_end: renewed.current_period_end }] };
      if (byId) return res.end(JSON.stringify(renewed));
      return res.end(JSON.stringify({ object: 'list', data: [renewed], has_more: false, url: '/v1/subscriptions' }));
    });
    await new Promise((resolve) => processor.listen(0, '127.0.0.1', resolve));
    secretsDir = mkdtempSync(path.join(tmpdir(), 'replicas-rails-'));
    // A database of its own: the other replicas' sweeps (no card API key) must not read these rows.
    await own.create();
  });
  after(async () => {
    for (const replica of pair) replica.child.kill('SIGKILL');
    await Promise.all(pair.map((replica) => replica.exit));
    processor.closeAllConnections();
    processor.close();
    rmSync(secretsDir, { recursive: true, force: true });
    await own.drop();
  });

  it('each due rail subscription is read exactly once while both replicas sweep', async () => {
    // The secrets file names the project, which exists once a replica runs: written after.
    const secretsFile = path.join(secretsDir, 'rail-secrets.json');
    writeFileSync(secretsFile, JSON.stringify({ projects: {} }));
    const env = {
      ...DEV,
      DATABASE_URL: own.url,
      RAIL_SECRETS_FILE: secretsFile,
      CARD_PAYMENTS_API_BASE_URL: `http://127.0.0.1:${processor.address().port}`,
    };
    pair = await Promise.all([startReplica(await freePort(), env), startReplica(await freePort(), env)]);
    const p = await project(pair[0].port);
    writeFileSync(
      secretsFile,
      JSON.stringify({ projects: { [p.projectId]: { card_payments: { webhookSecrets: [WEBHOOK_SECRET], apiKey: 'sk_test_replicas_expiry' } } } }),
    );
    await sleep(6_000); // the replicas re-read the secrets file at least every 5 s
    await operator(pair[0].port, 'PUT', `/projects/${p.projectId}/rails/card_payments`, {});
    await operator(pair[0].port, 'PUT', `/projects/${p.projectId}/products`, {
      products: [{ rail: 'card_payments', productId: 'prod_pro', entitlementKeys: ['pro'] }],
    });

    // COUNT subscriptions ending in a few seconds, through the card webhook of either replica.
    const end = Math.floor(Date.now() / 1000) + 4;
    for (let i = 0; i < COUNT; i++) {
      const id = `sub_replicas_${process.pid}_${i}`;
      const sub = {
        id,
        object: 'subscription',
        customer: `cus_replicas_${process.pid}_${i}`,
        status: 'active',
        cancel_at_period_end: false,
        current_period_end: end,
        metadata: {},
        items: {
          object: 'list',
          data: [{ id: `si_${i}`, object: 'subscription_item', current_period_end: end, price: { id: 'price_pro', product: 'prod_pro' } }],
        },
      };
      subscriptions.set(id, sub);
      const t = Math.floor(Date.now() / 1000);
      const payload = JSON.stringify({
        id: `evt_replicas_${process.pid}_${i}`,
        object: 'event',
        created: t,
        livemode: false,
        type: 'customer.subscription.updated',
        data: { object: sub },
      });
      const signature = createHmac('sha256', WEBHOOK_SECRET).update(`${t}.${payload}`).digest('hex');
      const res = await fetch(`http://127.0.0.1:${pair[i % 2].port}/v1/webhooks/card_payments/${p.projectId}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'stripe-signature': `t=${t},v1=${signature}` },
        body: payload,
      });
      assert.equal(res.status, 200, await res.text());
    }

    // Both replicas' job workers sweep every 10 s: every subscription read within a minute …
    const deadline = Date.now() + 60_000;
    while (reads.size < COUNT && Date.now() < deadline) await sleep(250);
    assert.equal(reads.size, COUNT, `${reads.size} of ${COUNT} subscriptions read`);
    // … and none again: the read renewed it (a later sweep finds nothing due).
    await sleep(12_000);
    assert.deepEqual(
      [...reads.entries()].filter(([, hits]) => hits !== 1),
      [],
      'each subscription read once',
    );
  });
});

describe('voided Play purchases read with two replicas', () => {
  // A local Publisher API needs a development replica (ANDROID_PUBLISHER_BASE_URL over http).
  const DEV = { NODE_ENV: 'development' };
  const PROJECTS = 3;
  const ENTRIES = 3; // two pages of two
  let pair = [];
  let google;
  let secretsDir;
  /** voidedpurchases.list requests per package: first pages (no page token) and all pages. */
  const firstPages = new Map();
  const pages = new Map();
  const own = ownDatabase('voided');
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

  before(async () => {
    // Google's token endpoint and the Publisher API's voidedpurchases.list, paged two at a time.
    google = http.createServer((req, res) => {
      const url = new URL(req.url, 'http://google');
      res.setHeader('content-type', 'application/json');
      if (req.method === 'POST' && url.pathname === '/token') {
        req.resume();
        return req.on('end', () => res.end(JSON.stringify({ access_token: 'ya29.replicas', expires_in: 3599, token_type: 'Bearer' })));
      }
      const m = url.pathname.match(/^\/androidpublisher\/v3\/applications\/([^/]+)\/purchases\/voidedpurchases$/);
      if (!m || req.headers.authorization !== 'Bearer ya29.replicas')
        return res.writeHead(404).end(JSON.stringify({ error: { code: 404, message: 'Not found' } }));
      const pkg = m[1];
      const offset = Number(url.searchParams.get('token') ?? 0);
      if (offset === 0) firstPages.set(pkg, (firstPages.get(pkg) ?? 0) + 1);
      pages.set(pkg, (pages.get(pkg) ?? 0) + 1);
      const entries = Array.from({ length: ENTRIES }, (_, i) => ({
        kind: 'androidpublisher#voidedPurchase',
        purchaseToken: `tok_${pkg}_${i}`,
        orderId: `GPA.${pkg}.${i}`,
        voidedTimeMillis: String(Date.now() - 60_000),
        voidedSource: 0,
        voidedReason: i === 0 ? 7 : 1,
      }));
      const next = offset + 2 < entries.length ? String(offset + 2) : undefined;
      return res.end(JSON.stringify({ voidedPurchases: entries.slice(offset, offset + 2), ...(next ? { tokenPagination: { nextPageToken: next } } : {}) }));
    });
    await new Promise((resolve) => google.listen(0, '127.0.0.1', resolve));
    secretsDir = mkdtempSync(path.join(tmpdir(), 'replicas-voided-'));
    // A database of its own: only these projects have an Android rail to read.
    await own.create();
  });
  after(async () => {
    for (const replica of pair) replica.child.kill('SIGKILL');
    await Promise.all(pair.map((replica) => replica.exit));
    google.closeAllConnections();
    google.close();
    rmSync(secretsDir, { recursive: true, force: true });
    await own.drop();
  });

  it("each project's voided purchases are read once per hour while both replicas run the job", async () => {
    const secretsFile = path.join(secretsDir, 'rail-secrets.json');
    writeFileSync(secretsFile, JSON.stringify({ projects: {} }));
    const googleUrl = `http://127.0.0.1:${google.address().port}/`;
    const env = { ...DEV, DATABASE_URL: own.url, RAIL_SECRETS_FILE: secretsFile, ANDROID_PUBLISHER_BASE_URL: googleUrl };
    pair = await Promise.all([startReplica(await freePort(), env), startReplica(await freePort(), env)]);
    const projects = [];
    for (let i = 0; i < PROJECTS; i++) projects.push({ ...(await project(pair[i % 2].port)), packageName: `com.example.voided${i}` });
    const serviceAccount = {
      type: 'service_account',
      client_email: 'replicas@example.iam.gserviceaccount.com',
      private_key: privatePem,
      token_uri: `${googleUrl}token`,
    };
    writeFileSync(
      secretsFile,
      JSON.stringify({
        projects: Object.fromEntries(projects.map((p) => [p.projectId, { android_store: { pushToken: 'push_replicas_voided_0123456789', serviceAccount } }])),
      }),
    );
    await sleep(6_000); // the replicas re-read the secrets file at least every 5 s
    for (const p of projects) await operator(pair[0].port, 'PUT', `/projects/${p.projectId}/rails/android_store`, { packageName: p.packageName });

    // The job looks for due projects every 30 s on one replica at a time: each project read within a minute …
    const deadline = Date.now() + 75_000;
    while (projects.some((p) => !firstPages.has(p.packageName)) && Date.now() < deadline) await sleep(250);
    assert.deepEqual(
      projects.filter((p) => !firstPages.has(p.packageName)).map((p) => p.packageName),
      [],
      'every project read',
    );
    // … and not again within the hour, though both replicas keep running the job.
    await sleep(35_000);
    assert.deepEqual(
      projects.map((p) => [firstPages.get(p.packageName), pages.get(p.packageName)]),
      projects.map(() => [1, 2]),
      'each project read once (two pages)',
    );
    const db = new pg.Client({ connectionString: own.url });
    await db.connect();
    try {
      const { rows } = await db.query(
        `SELECT project_id AS "projectId", count(*)::int AS n, count(*) FILTER (WHERE voided_source = 'list')::int AS listed
           FROM android_voided_purchases GROUP BY project_id ORDER BY project_id`,
      );
      assert.deepEqual(
        rows,
        projects.map((p) => ({ projectId: p.projectId, n: ENTRIES, listed: ENTRIES })).sort((a, b) => (a.projectId < b.projectId ? -1 : 1)),
      );
      const reads = await db.query(`SELECT count(*)::int AS n FROM android_voided_reads WHERE last_outcome = 'read' AND leased_by IS NULL`);
      assert.equal(reads.rows[0].n, PROJECTS);
    } finally {
      await db.end();
    }
  });
});

describe('an API replica beside a job runner', () => {
  // BACKGROUND_JOBS=disabled on the replica that serves requests; the runner does the jobs and
  // the deliveries. Development replicas (a local receiver), on a database of their own.
  const own = ownDatabase('roles');
  const DEV = { NODE_ENV: 'development', WEBHOOKS_ALLOW_PRIVATE: 'true', DATABASE_URL: own.url };
  const started = [];
  const received = [];
  let server;

  before(async () => {
    server = http.createServer((req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        res.writeHead(204).end();
      });
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    await own.create();
  });
  after(async () => {
    for (const replica of started) replica.child.kill('SIGKILL');
    await Promise.all(started.map((replica) => replica.exit));
    server.closeAllConnections();
    server.close();
    await own.drop();
  });

  it('the API replica runs no job and sends nothing; the runner does both', async () => {
    const api = await startReplica(await freePort(), { ...DEV, BACKGROUND_JOBS: 'disabled' });
    started.push(api);
    const p = await project(api.port);
    const endpoint = await operator(api.port, 'POST', `/projects/${p.projectId}/webhook-endpoints`, {
      url: `http://127.0.0.1:${server.address().port}/roles`,
      env: 'sandbox',
    });
    const delivery = await operator(api.port, 'POST', `/webhook-endpoints/${endpoint.id}/test`);
    // An enabled replica polls deliveries every 100 ms and jobs every second: 3 s is many polls.
    await sleep(3_000);
    assert.equal(received.length, 0, 'the API replica sent a delivery');
    const db = new pg.Client({ connectionString: own.url });
    await db.connect();
    try {
      const { rows: before } = await db.query('SELECT count(*)::int AS n FROM jobs');
      assert.equal(before[0].n, 0, 'the API replica queued or ran a recurring job');
      const runner = await startReplica(await freePort(), DEV);
      started.push(runner);
      const deadline = Date.now() + 30_000;
      while (!received.some((e) => e.id === delivery.eventId) && Date.now() < deadline) await sleep(100);
      assert.ok(
        received.some((e) => e.id === delivery.eventId),
        'the runner delivered the event the API replica recorded',
      );
      // The runner keeps the recurring jobs and runs them; the API replica never leases one.
      while (Date.now() < deadline) {
        const { rows } = await db.query("SELECT count(*)::int AS n FROM jobs WHERE status = 'done'");
        if (rows[0].n > 0) break;
        await sleep(250);
      }
      const { rows: leased } = await db.query('SELECT DISTINCT leased_by FROM jobs WHERE leased_by IS NOT NULL');
      assert.ok(leased.length > 0, 'no job ran');
      assert.deepEqual(
        leased.filter((row) => row.leased_by.split(':')[1] === String(api.child.pid)),
        [],
        'a job ran on the API replica',
      );
    } finally {
      await db.end();
    }
  });
});

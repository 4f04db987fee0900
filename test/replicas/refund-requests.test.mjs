/* global process, fetch, setTimeout, URL */
// npm run test:replicas (this file): two development replicas of the built service (dist/) over
// one PostgreSQL database of their own and one Redis, both running the durable job that answers
// Apple refund requests automatically. Refund requests arrive through both replicas' iOS
// webhooks (CONSUMPTION_REQUEST signed with a generated store chain); a local App Store Server
// API stand-in records every "Send Consumption Information". Asserted: each request is answered
// exactly once, within the job's 60 s, and every request ends `sent`.
// Run with node's test runner (`node --test test/replicas/`); needs DATABASE_URL and REDIS_URL.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { Buffer } from 'node:buffer';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const DIST = `.data/replicas-refunds-dist-${process.pid}`;
const SIGNING = `.data/replicas-refunds-signing-${process.pid}`;
const BUNDLE_ID = 'com.example.replicas.refunds';
const OPERATOR_TOKEN = `op_${randomBytes(24).toString('base64url')}`;
const WEBHOOK_SIGNING_KEY = randomBytes(32).toString('base64');
const REQUESTS = 24;

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

const database = `replicas_refunds_${Date.now().toString(36)}_${process.pid}`;
const databaseUrl = Object.assign(new URL(adminUrl), { pathname: `/${database}` }).toString();
const running = new Set();

function runNode(args, env) {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
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

async function startReplica(port, env) {
  const replica = runNode([`${DIST}/apps/api/src/main.js`], {
    NODE_ENV: 'development',
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
    ...env,
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

describe('Apple refund requests answered with two replicas', () => {
  let signing;
  let apple;
  let secretsDir;
  let pair = [];
  /** Send Consumption Information calls per transaction id. */
  const sent = new Map();
  const appleKey = generateKeyPairSync('ec', { namedCurve: 'P-256' });

  before(async () => {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${database}"`);
    await admin.end();
    cpSync(path.join(ROOT, 'dist'), path.join(ROOT, DIST), { recursive: true });
    const migrate = runNode([`${DIST}/apps/api/src/migrate.js`], { DATABASE_URL: databaseUrl });
    const { code } = await migrate.exit;
    assert.equal(code, 0, migrate.stderr());
    signing = await buildSigning();
    // The App Store Server API: "Send Consumption Information" answers 202 after a short while.
    apple = http.createServer((req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const m = new URL(req.url, 'http://apple').pathname.match(/^\/(production|sandbox)\/inApps\/v2\/transactions\/consumption\/([^/]+)$/);
        if (req.method !== 'PUT' || !m) return res.writeHead(404, { 'content-type': 'application/json' }).end('{"errorCode":4040000}');
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        assert.equal(body.customerConsented, true);
        sent.set(m[2], (sent.get(m[2]) ?? 0) + 1);
        setTimeout(() => res.writeHead(202).end(), 50);
      });
    });
    await new Promise((resolve) => apple.listen(0, '127.0.0.1', resolve));
    secretsDir = mkdtempSync(path.join(tmpdir(), 'replicas-refunds-'));
  });

  after(async () => {
    for (const child of running) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // the group is gone
      }
    }
    apple?.closeAllConnections();
    apple?.close();
    rmSync(path.join(ROOT, DIST), { recursive: true, force: true });
    rmSync(path.join(ROOT, SIGNING), { recursive: true, force: true });
    if (secretsDir) rmSync(secretsDir, { recursive: true, force: true });
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  });

  it('each refund request is answered exactly once while both replicas run the job', async () => {
    const secretsFile = path.join(secretsDir, 'rail-secrets.json');
    writeFileSync(secretsFile, JSON.stringify({ projects: {} }));
    const root = `http://127.0.0.1:${apple.address().port}`;
    const env = {
      RAIL_SECRETS_FILE: secretsFile,
      APP_STORE_SERVER_API_BASE_URL: `${root}/production`,
      APP_STORE_SERVER_API_SANDBOX_BASE_URL: `${root}/sandbox`,
    };
    pair = await Promise.all([startReplica(await freePort(), env), startReplica(await freePort(), env)]);
    const port = pair[0].port;
    const { id: projectId } = await operator(port, 'POST', '/projects', { name: 'Replicas refunds' });
    writeFileSync(
      secretsFile,
      JSON.stringify({
        projects: {
          [projectId]: {
            ios_store: {
              issuerId: '57246542-96fe-1a63-e053-0824d011072a',
              keyId: 'REPLICAS01',
              privateKey: appleKey.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
            },
          },
        },
      }),
    );
    await sleep(6_000); // the replicas re-read the secrets file at least every 5 s
    const chain = signing.createStoreChain();
    await operator(port, 'PUT', `/projects/${projectId}/products`, { products: [{ rail: 'ios_store', productId: 'pro.monthly', entitlementKeys: ['pro'] }] });
    await operator(port, 'PUT', `/projects/${projectId}/rails/ios_store`, {
      bundleId: BUNDLE_ID,
      trustedRootCertificates: [chain.rootPem],
      consumption: { mode: 'auto', customerConsented: true, refundPreference: 'decline', sampleContentProvided: true },
    });

    const notify = async (replica, notificationType, transaction) => {
      const payload = signing.notificationPayload({
        notificationType,
        notificationUUID: randomUUID(),
        signedDate: Date.now(),
        bundleId: BUNDLE_ID,
        environment: 'Sandbox',
        signedTransactionInfo: signing.signStoreJws(chain, { ...transaction, environment: 'Sandbox' }),
      });
      const res = await fetch(`http://127.0.0.1:${replica.port}/v1/webhooks/ios_store/${projectId}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ signedPayload: signing.signStoreJws(chain, payload) }),
      });
      const json = await res.json();
      assert.equal(res.status, 200, JSON.stringify(json));
      assert.equal(json.decision, 'applied', JSON.stringify(json));
    };

    // REQUESTS subscribers, each asking for a refund, through either replica.
    const transactions = [];
    for (let i = 0; i < REQUESTS; i++) {
      const now = Date.now();
      const transaction = signing.transactionPayload({ bundleId: BUNDLE_ID, productId: 'pro.monthly', signedDate: now, expiresDate: now + 30 * 86_400_000 });
      transactions.push(transaction);
      await notify(pair[i % 2], 'SUBSCRIBED', transaction);
      await notify(pair[(i + 1) % 2], 'CONSUMPTION_REQUEST', transaction);
    }
    const recordedAt = Date.now();

    // The job looks for due requests every 10 s on one replica at a time: every request answered within a minute …
    while (transactions.some((tx) => !sent.has(tx.transactionId)) && Date.now() - recordedAt < 60_000) await sleep(250);
    assert.deepEqual(
      transactions.filter((tx) => !sent.has(tx.transactionId)).map((tx) => tx.transactionId),
      [],
      'every request answered within 60 s',
    );
    // … and none again, though both replicas keep running the job.
    await sleep(22_000);
    assert.deepEqual(
      transactions.map((tx) => sent.get(tx.transactionId)),
      transactions.map(() => 1),
      'each request answered once',
    );
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query(`SELECT state, answer->>'source' AS source, count(*)::int AS n FROM refund_requests GROUP BY 1, 2`);
      assert.deepEqual(rows, [{ state: 'sent', source: 'auto', n: REQUESTS }]);
      const jobs = await db.query(`SELECT DISTINCT leased_by FROM jobs WHERE type = 'rails.answer_refund_requests' AND leased_by IS NOT NULL`);
      process.stdout.write(`# refund-request job runs leased by ${jobs.rows.length} worker(s)\n`);
    } finally {
      await db.end();
    }
  });
});

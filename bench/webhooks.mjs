// Outbound webhooks' speed goals, a phase script beside bench/run.mjs:
//
//   npm run build && DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/webhooks.mjs
//
// Starts the compiled API (NODE_ENV=development: local receivers need WEBHOOKS_ALLOW_PRIVATE,
// which production refuses) on a scratch database, and local HTTP receivers, then:
//   fan-out    grants at a steady rate to 4 endpoints: deliveries/s and p99 from the grant's
//              request to the receipt (an upper bound of commit-to-receipt)
//   isolation  the same with a 5th endpoint that never answers: the 4 endpoints' p99 (goal
//              <= 1.2x) and the grant p99 (<= 1.1x) against the fan-out run
//   outbox     closed-loop grant throughput of a project with 4 endpoints against one without
//   card       the same for card-payments notifications (new subscriptions), and the p99 from a
//              notification's request to the receipt of its customer.entitlements.updated
// The outbox goals read its cost: the same closed loop on a project with 4 endpoints whose
// deliveries are held (a trigger on the scratch database makes them due a day later) and
// drained after the window, so the window pays for the outbox writes only (goal >= 0.9x of
// the throughput without endpoints, grant and card paths). The strict reading, deliveries sent
// by the same process on the same cores during the window, is printed as `info`: on two shared
// cores it measures the machine as much as the code. The lines give the API process's CPU
// time (/proc) per grant or notification in each run, and per delivery during the drain; the
// grant path's are goals too: PostgreSQL CPU added per grant by 4 endpoints <= 0.3 ms, per delivery
// API and PostgreSQL CPU <= 0.1 ms each (PostgreSQL's is every server process's: on a shared
// machine it counts other work too).
// Environment: DATABASE_URL (required), BENCH_WEBHOOKS_SECONDS (8), BENCH_WEBHOOKS_GRANTS_PER_S
// (160: two events per grant to 4 endpoints = 1,280 deliveries/s offered, above the goal, so the
// phase finds whether the service keeps up rather than reporting its own offered load), LOG_LEVEL (warn),
// BENCH_WEBHOOKS_CONTROL_ROUNDS (0; when set, a control after the goals: that many alternating
// rounds of closed-loop grants without endpoints, with a trigger writing in each grant's
// transaction the rows the outbox writes for it, and with the outbox and its deliveries held:
// what the rows alone cost, before any outbox logic), BENCH_WEBHOOKS_BEFORE (a checkout of the build
// before, built, with node_modules: e.g. `git archive <commit> | tar -x -C dir`, a node_modules
// link and `npx nest build` there; when set, first the grant
// path's goal: BENCH_WEBHOOKS_BUILD_ROUNDS (3) alternating rounds of closed-loop grants without
// endpoints against that build's API and this one's on the same database, goal >= 1.2x, with each
// API's and PostgreSQL's CPU per grant), BENCH_WEBHOOKS_BUILDS_ONLY (1: stop after that comparison).
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import {
  API_ENTRY,
  ROOT,
  adminQuery,
  apiEnv,
  apiNodeArgs,
  call,
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
import { ORIGIN, mintWebApp } from './lib/read-routes.mjs';
import { cardSecretsFile, closedLoopNotifications } from './lib/card-notifications.mjs';
import os from 'node:os';
import path from 'node:path';

const adminUrl = requireDatabaseAndBuild('node bench/webhooks.mjs');
const SECONDS = Number(process.env.BENCH_WEBHOOKS_SECONDS ?? 8);
const RATE = Number(process.env.BENCH_WEBHOOKS_GRANTS_PER_S ?? 160);
const CONTROL_ROUNDS = Number(process.env.BENCH_WEBHOOKS_CONTROL_ROUNDS ?? 0);
const BEFORE = process.env.BENCH_WEBHOOKS_BEFORE ? path.resolve(process.env.BENCH_WEBHOOKS_BEFORE) : null;
const BUILD_ROUNDS = Number(process.env.BENCH_WEBHOOKS_BUILD_ROUNDS ?? 3);
const log = (line = '') => process.stdout.write(`${line}\n`);
const p99 = (values) => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))];
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** The API process, whose CPU time (/proc) the outbox lines divide by grants, notifications and deliveries. */
let apiPid = null;
/**
 * `fn`'s result with the CPU milliseconds the API (`cpuMs`) and PostgreSQL (`pgCpuMs`, every
 * server process) spent while it ran (null without /proc).
 */
async function withApiCpu(fn, pid = apiPid, database = undefined) {
  const from = cpuSeconds(pid);
  const postgres = samplePostgresCpu(250, { database });
  const result = await fn();
  const to = cpuSeconds(pid);
  const { seconds } = postgres.stop();
  return { ...result, cpuMs: from === null || to === null ? null : (to - from) * 1000, pgCpuMs: seconds === null ? null : seconds * 1000 };
}
const perUnit = (cpuMs, units) => (cpuMs === null || units === 0 ? 'n/a' : `${(cpuMs / units).toFixed(2)} ms`);

/** `count` customers, identified 8 at a time. */
async function customersOf(api, count, label) {
  const out = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < count) {
        const i = next++;
        out[i] = await identify(api, `${label}_${i}`);
      }
    }),
  );
  return out;
}

/** Receivers on one port: `/ok/<n>` answers 204, `/hang` holds the connection open. */
async function startReceivers() {
  const received = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/hang') return;
      const at = Date.now();
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      received.push({ path: req.url, at, customerId: event.data?.serviceCustomerId });
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { received, url: (p) => `http://127.0.0.1:${server.address().port}${p}`, close: () => (server.closeAllConnections(), server.close()) };
}

async function project(base, token, name, receivers, paths) {
  const api = await mintWebApp(base, token, name, { withSecret: true });
  for (const p of paths) await call(base, 'POST', `/admin/v1/projects/${api.project.id}/webhook-endpoints`, token, { url: receivers.url(p), env: 'sandbox' });
  return { base, ...api };
}

async function identify(api, i) {
  const res = await fetch(`${api.base}/v1/identify`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${api.publishable}`, Origin: ORIGIN, 'Content-Type': 'application/json' },
    body: JSON.stringify({ userId: `wh_user_${i}`, anonymousId: `wh_anon_${i}` }),
  });
  const json = await res.json();
  if (res.status !== 200) throw new Error(`identify: ${res.status} ${JSON.stringify(json)}`);
  return json.serviceCustomerId;
}

async function grant(api, customerId, key) {
  const started = Date.now();
  const res = await fetch(`${api.base}/v1/server/customers/${customerId}/grant`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${api.secret}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ entitlementKey: key, duration: 'P30D', reason: 'webhooks bench grant' }),
  });
  if (res.status === 200) await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`grant: ${res.status} ${Buffer.from(await res.arrayBuffer()).toString()}`);
  return { started, ms: Date.now() - started };
}

/** Grants at RATE per second for SECONDS to fresh customers; per-endpoint latencies and grant latencies. */
async function steadyRun(api, receivers, label) {
  const customers = await customersOf(api, RATE * SECONDS, label);
  const sentAt = new Map();
  const grantMs = [];
  const from = receivers.received.length;
  const t0 = Date.now();
  const inflight = [];
  let failed = 0;
  for (let i = 0; i < customers.length; i++) {
    const due = t0 + (i * 1000) / RATE;
    if (due > Date.now()) await sleep(due - Date.now());
    sentAt.set(customers[i], Date.now());
    inflight.push(
      grant(api, customers[i], 'pro').then(
        (g) => grantMs.push(g.ms),
        () => (failed++, sentAt.delete(customers[i])),
      ),
    );
  }
  await Promise.all(inflight);
  const expected = (customers.length - failed) * 2 * 4;
  const deadline = Date.now() + 30_000;
  const mine = () => receivers.received.slice(from).filter((r) => sentAt.has(r.customerId) && r.path !== '/hang');
  while (mine().length < expected && Date.now() < deadline) await sleep(50);
  const got = mine();
  const last = Math.max(...got.map((r) => r.at));
  const latencies = got.map((r) => r.at - sentAt.get(r.customerId));
  return { failed, deliveries: got.length, expected, perSecond: got.length / ((last - t0) / 1000), p99: p99(latencies), grantP99: p99(grantMs) };
}

const HOLD_MS = 86_400_000;

/**
 * Holds the deliveries of `projectId` while the returned release() is not called: a trigger on
 * the scratch database writes them due a day later. release() drops it, makes them due now and
 * resolves once `expected` deliveries of `isMine` arrived (or after 60 s): the drain's seconds.
 */
async function holdDeliveries(dbUrl, projectId, receivers) {
  const tag = projectId.replace(/[^a-z0-9]/gi, '');
  await adminQuery(
    dbUrl,
    `CREATE FUNCTION bench_hold_${tag}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.next_attempt_at_ms := NEW.next_attempt_at_ms + ${HOLD_MS}; RETURN NEW; END $$;
     CREATE TRIGGER bench_hold_${tag} BEFORE INSERT ON webhook_deliveries FOR EACH ROW WHEN (NEW.project_id = '${projectId}') EXECUTE FUNCTION bench_hold_${tag}();`,
  );
  const from = receivers.received.length;
  return async (expected, isMine) => {
    await adminQuery(
      dbUrl,
      `DROP TRIGGER bench_hold_${tag} ON webhook_deliveries; DROP FUNCTION bench_hold_${tag}();
       UPDATE webhook_deliveries SET next_attempt_at_ms = next_attempt_at_ms - ${HOLD_MS} WHERE project_id = '${projectId}' AND status = 'pending';`,
    );
    const t0 = Date.now();
    const mine = () => receivers.received.slice(from).filter(isMine).length;
    return withApiCpu(async () => {
      while (mine() < expected && Date.now() - t0 < 60_000) await sleep(50);
      return { delivered: mine(), seconds: (Date.now() - t0) / 1000 };
    });
  };
}

async function closedLoopGrants(api, ms, connections = 8, pid = apiPid, database = undefined) {
  const customers = await customersOf(api, 200, `loop_${api.project.id}`);
  let done = 0;
  let k = 0;
  const until = Date.now() + ms;
  const { cpuMs, pgCpuMs } = await withApiCpu(
    () =>
      Promise.all(
        Array.from({ length: connections }, async () => {
          while (Date.now() < until) {
            const n = k++;
            if (await grant(api, customers[n % customers.length], `k${n % 7}`).catch(() => null)) done++;
          }
        }),
      ),
    pid,
    database,
  );
  return { perSecond: done / (ms / 1000), done, cpuMs, pgCpuMs, customers: new Set(customers) };
}

/**
 * The control: grants of a project whose endpoints are disabled (so the outbox records nothing)
 * while a trigger on `entitlements` writes, in the grant's transaction, the rows the outbox
 * writes for a grant (the customer's counter, an update and a granted_manually event of the
 * sizes `held` recorded, one pending delivery of each to each endpoint, due in the far future),
 * against no endpoints and against `held` (the outbox with its deliveries held), in `rounds`
 * alternating rounds.
 */
async function rowsControl(dbUrl, base, token, receivers, paths, off, held, rounds) {
  const rows = await project(base, token, 'wh control rows', receivers, paths);
  const id = rows.project.id;
  await adminQuery(dbUrl, `UPDATE webhook_endpoints SET status = 'disabled' WHERE project_id = '${id}'`);
  const { rows: sizes } = await adminQuery(
    dbUrl,
    `SELECT type, avg(length(body))::int AS bytes FROM webhook_events WHERE project_id = '${held.project.id}' GROUP BY type`,
  );
  const bytesOf = (type) => sizes.find((row) => row.type === type)?.bytes ?? 500;
  const [update, side] = [bytesOf('customer.entitlements.updated'), bytesOf('entitlement.granted_manually')];
  const tag = id.replace(/[^a-z0-9]/gi, '');
  const eventId = `'evt_' || replace(gen_random_uuid()::text, '-', '')`;
  const body = (bytes) => `md5(random()::text) || repeat('x', ${Math.max(0, bytes - 32)})`;
  await adminQuery(
    dbUrl,
    `CREATE FUNCTION bench_rows_${tag}() RETURNS trigger LANGUAGE plpgsql AS $$
       DECLARE e1 text := ${eventId}; e2 text := ${eventId};
       BEGIN
         INSERT INTO webhook_customer_sequences (project_id, env, customer_id, last_sequence) VALUES (NEW.project_id, NEW.env, NEW.customer_id, 1)
           ON CONFLICT (project_id, env, customer_id) DO UPDATE SET last_sequence = webhook_customer_sequences.last_sequence + 1;
         INSERT INTO webhook_events (id, project_id, env, customer_id, type, body, created_at_ms)
           VALUES (e1, NEW.project_id, NEW.env, NEW.customer_id, 'customer.entitlements.updated', ${body(update)}, 0),
                  (e2, NEW.project_id, NEW.env, NEW.customer_id, 'entitlement.granted_manually', ${body(side)}, 0);
         INSERT INTO webhook_deliveries (id, project_id, env, endpoint_id, event_id, event_type, status, attempts, next_attempt_at_ms, created_at_ms)
           SELECT 'wd_' || replace(gen_random_uuid()::text, '-', ''), NEW.project_id, NEW.env, w.id, ev.id, ev.type, 'pending', 0, 9e15::bigint, 0
             FROM webhook_endpoints w, (VALUES (e1, 'customer.entitlements.updated'), (e2, 'entitlement.granted_manually')) AS ev(id, type)
            WHERE w.project_id = NEW.project_id AND w.env = NEW.env;
         RETURN NULL;
       END $$;
     CREATE TRIGGER bench_rows_${tag} AFTER INSERT OR UPDATE ON entitlements FOR EACH ROW WHEN (NEW.project_id = '${id}') EXECUTE FUNCTION bench_rows_${tag}();`,
  );
  // Held again (the goal's run drained them): the outbox's deliveries stay out of the windows.
  await holdDeliveries(dbUrl, held.project.id, receivers);
  await closedLoopGrants(rows, 2000);
  const ratios = { rows: [], held: [] };
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? ['off', 'rows', 'held'] : ['held', 'rows', 'off'];
    const runs = {};
    for (const name of order) runs[name] = await closedLoopGrants({ off, rows, held }[name], SECONDS * 1000);
    ratios.rows.push(runs.rows.perSecond / runs.off.perSecond);
    ratios.held.push(runs.held.perSecond / runs.off.perSecond);
    log(
      `info webhooks control round ${round + 1}: ${Math.round(runs.off.perSecond)} grants/s without endpoints, ${Math.round(runs.rows.perSecond)} with the rows alone ` +
        `(PostgreSQL CPU/grant ${perUnit(runs.rows.pgCpuMs, runs.rows.done)} vs ${perUnit(runs.off.pgCpuMs, runs.off.done)}), ${Math.round(runs.held.perSecond)} with the outbox, deliveries held`,
    );
  }
  const range = (values) => `${Math.min(...values).toFixed(2)} – ${Math.max(...values).toFixed(2)}x`;
  log(
    `info webhooks control: the outbox's rows alone written in the grant's transaction ${range(ratios.rows)} of the throughput without endpoints, ` +
      `the outbox (deliveries held) ${range(ratios.held)}, over ${rounds} rounds`,
  );
}

/**
 * The grant path's goal: the build before (BENCH_WEBHOOKS_BEFORE) and this one, each its own API
 * on the same database, closed-loop grants without endpoints in alternating rounds, each round's
 * throughput and its API's and PostgreSQL's CPU per grant (PostgreSQL's: the scratch database's
 * backends only, the idle API's polls among them). Answers whether the goal was met.
 */
async function buildComparison(env, token, current, database) {
  const port = await freePort();
  const args = apiNodeArgs()
    .split(' ')
    .map((word) => word.split(ROOT).join(BEFORE))
    .join(' ');
  // The schema is this build's (a superset): the build before runs no migration of its own.
  const before = startNode(
    'api-before',
    path.join(BEFORE, 'dist/apps/api/src/main.js'),
    { ...env, PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, MIGRATIONS_RUN: 'false' },
    args,
    BEFORE,
  );
  try {
    const base = `http://127.0.0.1:${port}`;
    await waitForHttp(before, `${base}/v1/healthz`);
    const apis = {
      before: { api: await project(base, token, 'wh build before', null, []), pid: before.child.pid },
      after: { api: await project(current.base, token, 'wh build after', null, []), pid: apiPid },
    };
    for (const { api, pid } of Object.values(apis)) await closedLoopGrants(api, 2000, 8, pid);
    const ratios = [];
    for (let round = 0; round < BUILD_ROUNDS; round++) {
      const runs = {};
      for (const name of round % 2 === 0 ? ['before', 'after'] : ['after', 'before']) {
        runs[name] = await closedLoopGrants(apis[name].api, SECONDS * 1000, 8, apis[name].pid, database);
      }
      ratios.push(runs.after.perSecond / runs.before.perSecond);
      const of = (run) =>
        `${Math.round(run.perSecond)} grants/s, API CPU/grant ${perUnit(run.cpuMs, run.done)}, PostgreSQL CPU/grant ${perUnit(run.pgCpuMs, run.done)}`;
      log(`info webhooks grant path round ${round + 1}, no endpoints: before ${of(runs.before)}; this build ${of(runs.after)}`);
    }
    const low = Math.min(...ratios);
    log(
      `${low >= 1.2 ? 'ok' : 'MISS'} webhooks grant path: this build's grants/s without endpoints ${Math.min(...ratios).toFixed(2)} – ${Math.max(...ratios).toFixed(2)}x ` +
        `the build before's over ${BUILD_ROUNDS} alternating rounds (goal >= 1.2x)`,
    );
    return low >= 1.2;
  } finally {
    await stop(before);
  }
}

async function main() {
  const db = await createScratchDatabase(adminUrl, 'webhooks');
  const token = `op_bench_${randomBytes(16).toString('hex')}`;
  const cards = cardSecretsFile(path.join(os.tmpdir(), `bench-webhooks-rails-${process.pid}.json`));
  const port = await freePort();
  const env = {
    ...apiEnv(db.url, port, token),
    NODE_ENV: 'development',
    WEBHOOKS_ALLOW_PRIVATE: 'true',
    WEBHOOK_SIGNING_KEY: randomBytes(32).toString('base64'),
    METRICS_PORT: '0',
    SEED_DEMO: 'false',
    RAIL_SECRETS_FILE: cards.path,
  };
  const server = startNode('api', API_ENTRY, env, apiNodeArgs());
  apiPid = server.child.pid;
  const receivers = await startReceivers();
  try {
    const base = `http://127.0.0.1:${port}`;
    await waitForHttp(server, `${base}/v1/healthz`);
    const four = ['/ok/1', '/ok/2', '/ok/3', '/ok/4'];
    if (BEFORE) {
      await buildComparison(env, token, { base }, db.name);
      if (process.env.BENCH_WEBHOOKS_BUILDS_ONLY === '1') return;
    }
    // Each steady run starts on vacuumed tables, so the isolation run (the second) does not also
    // pay for vacuuming what the fan-out run left behind.
    const settle = () => adminQuery(db.url, 'VACUUM (ANALYZE) webhook_deliveries, webhook_events, webhook_endpoints, webhook_customer_sequences');
    const fanProject = await project(base, token, 'wh fan-out', receivers, four);
    await settle();
    const fan = await steadyRun(fanProject, receivers, 'fan');
    log(
      `bench: webhooks, ${RATE} grants/s for ${SECONDS} s, 2 events per grant, 4 endpoints (${fan.deliveries}/${fan.expected} delivered, ${fan.failed} grants failed)`,
    );
    const fanOk = fan.perSecond >= 1000 && fan.p99 < 1000 && fan.deliveries === fan.expected && fan.failed === 0;
    log(
      `${fanOk ? 'ok' : 'MISS'} webhooks fan-out: ${Math.round(fan.perSecond)} deliveries/s (goal >= 1000), p99 grant-to-receipt ${fan.p99} ms (goal < 1000)`,
    );
    const isoProject = await project(base, token, 'wh isolation', receivers, [...four, '/hang']);
    await settle();
    const iso = await steadyRun(isoProject, receivers, 'iso');
    const moved = iso.p99 / fan.p99 - 1;
    const grantMoved = iso.grantP99 / fan.grantP99 - 1;
    const isoOk = moved <= 0.2 && grantMoved <= 0.1 && iso.deliveries === iso.expected && iso.failed === 0;
    log(
      `${isoOk ? 'ok' : 'MISS'} webhooks isolation (5th endpoint hung): others' p99 ${fan.p99} -> ${iso.p99} ms (${(1 + moved).toFixed(2)}x, goal <= 1.2x), ` +
        `grant p99 ${fan.grantP99} -> ${iso.grantP99} ms (${(1 + grantMoved).toFixed(2)}x, goal <= 1.1x); ${iso.deliveries}/${iso.expected} delivered, ${iso.failed} grants failed`,
    );
    const onFrom = receivers.received.length;
    const offRun = await closedLoopGrants(await project(base, token, 'wh off', receivers, []), SECONDS * 1000);
    const off = offRun.perSecond;
    const onRun = await closedLoopGrants(await project(base, token, 'wh on', receivers, four), SECONDS * 1000);
    const on = onRun.perSecond;
    const ratio = on / off;
    log(
      `info webhooks outbox with the deliveries in the window (grant path): ${Math.round(on)} grants/s with 4 endpoints vs ${Math.round(off)} without (${ratio.toFixed(2)}x)`,
    );
    // The held run starts once the strict run's deliveries are out, so they do not overlap it.
    const onDeadline = Date.now() + 30_000;
    const onDelivered = () => receivers.received.slice(onFrom).filter((r) => onRun.customers.has(r.customerId)).length;
    while (onDelivered() < onRun.done * 2 * four.length && Date.now() < onDeadline) await sleep(50);
    const heldProject = await project(base, token, 'wh on held', receivers, four);
    const releaseGrants = await holdDeliveries(db.url, heldProject.project.id, receivers);
    const held = await closedLoopGrants(heldProject, SECONDS * 1000);
    const grantDrain = await releaseGrants(held.done * 2 * four.length, (r) => held.customers.has(r.customerId));
    log(
      `${held.perSecond / off >= 0.9 ? 'ok' : 'MISS'} webhooks outbox writes only (grant path, deliveries held and drained after the window): ${Math.round(held.perSecond)} grants/s with 4 endpoints vs ${Math.round(off)} without ` +
        `(${(held.perSecond / off).toFixed(2)}x, goal >= 0.9x); API CPU/grant ${perUnit(held.cpuMs, held.done)} vs ${perUnit(offRun.cpuMs, offRun.done)} without ` +
        `(${perUnit(onRun.cpuMs, onRun.done)} with the deliveries in the window); PostgreSQL CPU/grant ${perUnit(held.pgCpuMs, held.done)} vs ` +
        `${perUnit(offRun.pgCpuMs, offRun.done)} without (${perUnit(onRun.pgCpuMs, onRun.done)}); then ${grantDrain.delivered}/${held.done * 2 * four.length} delivered in ` +
        `${grantDrain.seconds.toFixed(1)} s, API CPU/delivery ${perUnit(grantDrain.cpuMs, grantDrain.delivered)}`,
    );
    // The outbox's cost per grant on PostgreSQL (every server process: on a shared machine, others' work too) and a delivery's.
    const pgPerGrant = (run) => (run.pgCpuMs === null || run.done === 0 ? null : run.pgCpuMs / run.done);
    const addedPg = pgPerGrant(held) === null || pgPerGrant(offRun) === null ? null : pgPerGrant(held) - pgPerGrant(offRun);
    log(
      `${addedPg !== null && addedPg <= 0.3 ? 'ok' : 'MISS'} webhooks outbox PostgreSQL CPU added per grant by 4 endpoints: ` +
        `${addedPg === null ? 'n/a' : `${addedPg.toFixed(2)} ms`} (${perUnit(held.pgCpuMs, held.done)} with, deliveries held, vs ${perUnit(offRun.pgCpuMs, offRun.done)} without; goal <= 0.3 ms)`,
    );
    const apiPerDelivery = grantDrain.cpuMs === null || grantDrain.delivered === 0 ? null : grantDrain.cpuMs / grantDrain.delivered;
    const pgPerDelivery = grantDrain.pgCpuMs === null || grantDrain.delivered === 0 ? null : grantDrain.pgCpuMs / grantDrain.delivered;
    log(
      `${apiPerDelivery !== null && apiPerDelivery <= 0.1 && pgPerDelivery !== null && pgPerDelivery <= 0.1 ? 'ok' : 'MISS'} webhooks delivery cost (the held grants' drain): ` +
        `API CPU/delivery ${perUnit(grantDrain.cpuMs, grantDrain.delivered)} (goal <= 0.1 ms), PostgreSQL CPU/delivery ${perUnit(grantDrain.pgCpuMs, grantDrain.delivered)} (goal <= 0.1 ms)`,
    );
    const cardOff = await project(base, token, 'wh card off', receivers, []);
    await cards.enable(base, token, cardOff.project.id);
    const cardOn = await project(base, token, 'wh card on', receivers, four);
    await cards.enable(base, token, cardOn.project.id);
    const from = receivers.received.length;
    const noEndpoints = await withApiCpu(() => closedLoopNotifications(base, cardOff.project.id, SECONDS * 1000));
    const withEndpoints = await withApiCpu(() => closedLoopNotifications(base, cardOn.project.id, SECONDS * 1000));
    const expected = withEndpoints.done * 2 * four.length;
    const deadline = Date.now() + 30_000;
    const mine = () => receivers.received.slice(from).filter((r) => withEndpoints.sentAt.has(r.customerId));
    while (mine().length < expected && Date.now() < deadline) await sleep(50);
    const cardRatio = withEndpoints.perSecond / noEndpoints.perSecond;
    log(
      `info webhooks outbox with the deliveries in the window (card-notification path): ${Math.round(withEndpoints.perSecond)} notifications/s with 4 endpoints vs ` +
        `${Math.round(noEndpoints.perSecond)} without (${cardRatio.toFixed(2)}x; ${noEndpoints.failed + withEndpoints.failed} failed)`,
    );
    const got = mine();
    const cardP99 = p99(got.map((r) => r.at - withEndpoints.sentAt.get(r.customerId)));
    const cardOk = cardP99 < 1000 && got.length === expected;
    log(
      `${cardOk ? 'ok' : 'MISS'} webhooks card notification -> delivery: p99 ${cardP99} ms (goal < 1000) under the closed loop, ${got.length}/${expected} delivered`,
    );
    const cardHeld = await project(base, token, 'wh card on held', receivers, four);
    await cards.enable(base, token, cardHeld.project.id);
    const releaseCards = await holdDeliveries(db.url, cardHeld.project.id, receivers);
    const heldNotifications = await withApiCpu(() => closedLoopNotifications(base, cardHeld.project.id, SECONDS * 1000));
    const cardDrain = await releaseCards(heldNotifications.done * 2 * four.length, (r) => heldNotifications.sentAt.has(r.customerId));
    log(
      `${heldNotifications.perSecond / noEndpoints.perSecond >= 0.9 ? 'ok' : 'MISS'} webhooks outbox writes only (card-notification path, deliveries held and drained after the window): ` +
        `${Math.round(heldNotifications.perSecond)} notifications/s with 4 endpoints vs ${Math.round(noEndpoints.perSecond)} without ` +
        `(${(heldNotifications.perSecond / noEndpoints.perSecond).toFixed(2)}x, goal >= 0.9x; ${heldNotifications.failed} failed); ` +
        `API CPU/notification ${perUnit(heldNotifications.cpuMs, heldNotifications.done)} vs ${perUnit(noEndpoints.cpuMs, noEndpoints.done)} without ` +
        `(${perUnit(withEndpoints.cpuMs, withEndpoints.done)} with the deliveries in the window); PostgreSQL CPU/notification ` +
        `${perUnit(heldNotifications.pgCpuMs, heldNotifications.done)} vs ${perUnit(noEndpoints.pgCpuMs, noEndpoints.done)} without ` +
        `(${perUnit(withEndpoints.pgCpuMs, withEndpoints.done)}); then ${cardDrain.delivered}/${heldNotifications.done * 2 * four.length} ` +
        `delivered in ${cardDrain.seconds.toFixed(1)} s, API CPU/delivery ${perUnit(cardDrain.cpuMs, cardDrain.delivered)}`,
    );
    if (CONTROL_ROUNDS > 0) {
      await rowsControl(db.url, base, token, receivers, four, await project(base, token, 'wh control off', receivers, []), heldProject, CONTROL_ROUNDS);
    }
  } finally {
    cards.remove();
    receivers.close();
    await stop(server);
    await db.drop();
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  killChildren();
  process.exit(1);
});

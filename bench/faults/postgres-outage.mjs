// PostgreSQL stopped under load (npm run build first; node bench/faults/postgres-outage.mjs).
// Starts its own PostgreSQL (embedded binaries) on a free port and the compiled API on it,
// runs closed-loop event ingestion, stops PostgreSQL for FAULT_OUTAGE_S seconds and starts it
// again on the same port and data directory. Checks: while it is down every request ends
// with a 500/503 error envelope within the connection timeout (no hang), and once the stop has
// taken effect with 503 internal_error and Retry-After (the database is unreachable), readiness is 503;
// after it is back the API recovers without a restart; every acknowledged (202) event is stored.
import { Checks, load, log, preflight, project, request, scratchPostgres, sleep, startApi, summarize } from './lib.mjs';

const OUTAGE_S = Number(process.env.FAULT_OUTAGE_S ?? 8);
const checks = new Checks();

async function main() {
  preflight();
  const db = await scratchPostgres();
  const api = await startApi({ DATABASE_URL: db.url });
  const p = await project(api.port, { events: { sustained: 1_000_000, burst: 1_000_000 } });
  log(`postgres-outage: API on ${api.port}, PostgreSQL on ${db.port}, outage ${OUTAGE_S} s`);

  const traffic = load(api.port, p.publishable);
  await sleep(3000);
  const downAt = Date.now();
  await db.stop();
  log(`  PostgreSQL stopped at +${((downAt - traffic.results[0].at) / 1000).toFixed(1)} s`);
  await sleep(1500);
  const readyWhileDown = await request(api.port, 'GET', '/v1/readyz');
  await sleep(OUTAGE_S * 1000 - 1500);
  await db.start();
  const upAt = Date.now();
  log(`  PostgreSQL started again after ${((upAt - downAt) / 1000).toFixed(1)} s`);
  let recoveredAt;
  for (let i = 0; i < 300 && !recoveredAt; i++) {
    const res = await request(api.port, 'GET', '/v1/readyz');
    if (res.status === 200) recoveredAt = Date.now();
    else await sleep(100);
  }
  await sleep(3000);
  await traffic.stop();

  const during = traffic.results.filter((r) => r.at >= downAt + 200 && r.at < upAt);
  const afterRecovery = traffic.results.filter((r) => recoveredAt && r.at >= recoveredAt + 1000);
  log(`  before: ${JSON.stringify(summarize(traffic.results.filter((r) => r.at < downAt)))}`);
  log(`  during: ${JSON.stringify(summarize(during))}`);
  log(`  after:  ${JSON.stringify(summarize(afterRecovery))}`);

  checks.check(
    readyWhileDown.status === 503 && readyWhileDown.body?.checks?.database === 'down',
    `readiness 503 while PostgreSQL is down (got ${readyWhileDown.status})`,
  );
  checks.check(
    during.length > 0 && during.every((r) => r.status === 500 || r.status === 503 || r.status === 202),
    'during the outage every answer is 500/503 (or 202 from before the stop)',
  );
  checks.check(
    during.filter((r) => r.status >= 500).every((r) => typeof r.body?.error?.code === 'string'),
    'errors are envelopes with a code',
  );
  const settled = during.filter((r) => r.at >= downAt + 1000 && r.status >= 500);
  checks.check(
    settled.length > 0 && settled.every((r) => r.status === 503 && r.body?.error?.type === 'internal_error'),
    `from 1 s into the outage the errors are 503 internal_error (${settled.filter((r) => r.status === 503).length}/${settled.length})`,
  );
  checks.check(
    during.every((r) => r.status !== 0),
    'no request hung or lost its connection',
  );
  checks.check(
    Math.max(0, ...during.map((r) => r.ms)) < 10_000,
    `no request took 10 s or more (max ${Math.round(Math.max(0, ...during.map((r) => r.ms)))} ms)`,
  );
  checks.check(Boolean(recoveredAt), `readiness back to 200 without a restart (${recoveredAt ? recoveredAt - upAt : '-'} ms after PostgreSQL)`);
  checks.check(afterRecovery.length > 0 && afterRecovery.every((r) => r.status === 202), 'after recovery every request is accepted');
  checks.check(api.child.exitCode === null, 'the API process kept running');

  await checks.acknowledgedAreStored(traffic.results, db.url, p.projectId);
}

checks.run('postgres-outage', main);

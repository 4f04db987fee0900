// Redis stopped under load (npm run build first; node bench/faults/redis-outage.mjs).
// Starts its own PostgreSQL (embedded) and redis-server on free ports and the compiled API
// with REDIS_URL, drives a project whose events bucket is small so 429s happen, then stops
// Redis: limits fail open (everything is accepted, rate_limit_fail_open_total grows,
// readiness stays 200 with redis "down"), and after Redis is back limits apply again.
import {
  Checks,
  freePort,
  load,
  log,
  preflight,
  project,
  request,
  sample,
  scrape,
  scratchPostgres,
  sleep,
  startApi,
  startRedis,
  stopChild,
  summarize,
} from './lib.mjs';

const checks = new Checks();

async function main() {
  preflight();
  const db = await scratchPostgres();
  const redisPort = await freePort();
  let redis = await startRedis(redisPort);
  const api = await startApi({ DATABASE_URL: db.url, REDIS_URL: `redis://127.0.0.1:${redisPort}` });
  const p = await project(api.port, { events: { sustained: 20, burst: 20 } });
  log(`redis-outage: API on ${api.port}, Redis on ${redisPort}`);

  const traffic = load(api.port, p.publishable, 8);
  await sleep(3000);
  const failOpenBefore = sample(await scrape(api.metricsPort), 'rate_limit_fail_open_total');
  const downAt = Date.now();
  await stopChild(redis, 'SIGKILL');
  await sleep(1000);
  const readyWhileDown = await request(api.port, 'GET', '/v1/readyz');
  await sleep(4000);
  const failOpenDuring = sample(await scrape(api.metricsPort), 'rate_limit_fail_open_total');
  redis = await startRedis(redisPort);
  const upAt = Date.now();
  await sleep(5000);
  await traffic.stop();
  const readyAfter = await request(api.port, 'GET', '/v1/readyz');
  await stopChild(redis);

  const before = traffic.results.filter((r) => r.at < downAt);
  const during = traffic.results.filter((r) => r.at >= downAt + 500 && r.at < upAt);
  const afterUp = traffic.results.filter((r) => r.at >= upAt + 3000);
  log(`  before: ${JSON.stringify(summarize(before))}`);
  log(`  during: ${JSON.stringify(summarize(during))}`);
  log(`  after:  ${JSON.stringify(summarize(afterUp))}`);

  checks.check(
    before.some((r) => r.status === 429),
    'with Redis up the small bucket limits (429s)',
  );
  checks.check(during.length > 0 && during.every((r) => r.status === 202), 'with Redis down every request is accepted (fail open)');
  checks.check(Math.max(0, ...during.map((r) => r.ms)) < 2000, `fail-open answers are quick (max ${Math.round(Math.max(0, ...during.map((r) => r.ms)))} ms)`);
  checks.check(failOpenDuring > failOpenBefore, `rate_limit_fail_open_total grew (${failOpenBefore} -> ${failOpenDuring})`);
  checks.check(
    readyWhileDown.status === 200 && readyWhileDown.body?.checks?.redis === 'down',
    `readiness stays 200 and reports redis down (${JSON.stringify(readyWhileDown.body)})`,
  );
  checks.check(
    afterUp.some((r) => r.status === 429),
    'after Redis is back, limits apply again (429s)',
  );
  checks.check(readyAfter.body?.checks?.redis === 'ok', 'readiness reports redis ok again');
  checks.check(
    traffic.results.every((r) => r.status === 202 || r.status === 429),
    'no 5xx and no connection errors at any time',
  );
}

checks.run('redis-outage', main);

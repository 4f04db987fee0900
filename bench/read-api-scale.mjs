// The read API at the scale of data, and what the event rollups cost ingestion:
// `npm run build && node bench/read-api-scale.mjs` (npm run bench:read-api-scale).
//
// Starts this build's API twice on one scratch database on the DATABASE_URL server (dropped
// afterwards): `api` as deployed, `norollups` with EVENT_ROLLUPS=false. Preloads
// BENCH_SCALE_EVENTS events and BENCH_SCALE_CUSTOMERS customers with the scale phase's preload
// (bench/phases/scale.mjs; 200,000 and 20,000 by default, the goal's full size is 10,000,000 and
// 1,000,000), then the rollups, revenue ledger and activity those customers would have
// (bench/lib/read-scale-seed.mjs). Then:
//   - every read of the read API, in turn: a closed loop of BENCH_SATURATION_SECONDS (5) over
//     BENCH_READ_CONNECTIONS (16) connections gives its saturation, then an open-loop run at
//     half of it (paced, as the hot reads are measured) gives its p99. Goal per read:
//     p99 < 20 ms;
//   - ingestion: BENCH_ROUNDS (2) rotating rounds of a closed loop of BENCH_DURATION (10) s on
//     each server (the bench's realistic web batches: page views with their URL, so the analytics
//     rollups are written, and errors). Goal: events/s
//     with the rollups >= 0.9 x without them.
// One `ok`/`MISS` line per goal.
//
// Environment: DATABASE_URL (required), BENCH_SCALE_EVENTS, BENCH_SCALE_CUSTOMERS, BENCH_DURATION,
// BENCH_ROUNDS, BENCH_READ_DURATION, BENCH_READ_CONNECTIONS, BENCH_SATURATION_SECONDS,
// BENCH_READ_WARMUP (2), BENCH_READS (comma-separated indexes of the reads to run), LOG_LEVEL (warn).
import os from 'node:os';
import { API_ENTRY as apiEntry, ROOT as root, apiNodeArgs, createScratchDatabase, requireDatabaseAndBuild, stop } from './lib/common.mjs';
import { CONNECTIONS, drive, generatorLine, leastStolen, log, mean, paced, setAdminUrl, settle, stealNote, summarise } from './lib/harness.mjs';
import { bodySource } from './lib/event-bodies.mjs';
import { ingestionServer, startApi } from './lib/servers.mjs';
import { mintReadProject, readApiRoutes, seedReadScale } from './lib/read-scale-seed.mjs';
import { selectRoutes } from './lib/read-routes.mjs';
import { SCALE_CUSTOMERS, SCALE_EVENTS, preload } from './phases/scale.mjs';

const adminUrl = requireDatabaseAndBuild('node bench/read-api-scale.mjs');
setAdminUrl(adminUrl);
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2));
const READ_DURATION = Number(process.env.BENCH_READ_DURATION ?? 10);
const READ_CONNECTIONS = Number(process.env.BENCH_READ_CONNECTIONS ?? 16);
const SATURATION_SECONDS = Number(process.env.BENCH_SATURATION_SECONDS ?? 5);
/** Seconds of unmeasured closed loop before each read's saturation run (its plans cached, its code compiled). */
const READ_WARMUP = Number(process.env.BENCH_READ_WARMUP ?? 2);
const MAX_P99_MS = 20;
const MIN_INGEST_RATIO = 0.9;
const check = (ok) => (ok ? 'ok  ' : 'MISS');
const seconds = (since) => Math.round((performance.now() - since) / 1000);

/** Closed-loop saturation of one read, then its p99 in an open-loop run at half of it. */
async function measureRead(api, route) {
  if (READ_WARMUP > 0) await drive({ url: api.base, headers: route.headers, connections: READ_CONNECTIONS, duration: READ_WARMUP, next: route.next });
  const closed = await leastStolen(`${route.name} saturation`, async () => {
    const run = await drive({ url: api.base, headers: route.headers, connections: READ_CONNECTIONS, duration: SATURATION_SECONDS, next: route.next });
    return { ...summarise(run), rps: Math.round(run['2xx'] / run.duration), non2xx: run.non2xx };
  });
  const rate = Math.max(1, Math.round(closed.rps / 2));
  const open = await leastStolen(`${route.name} at ${rate} req/s`, () =>
    paced({ url: api.base, headers: route.headers, connections: READ_CONNECTIONS, duration: READ_DURATION, rate, next: route.next, perRequest: 1 }),
  );
  const ok = open.p99 < MAX_P99_MS && open.non2xx === 0 && open.errors === 0 && closed.non2xx === 0;
  log(
    `bench: ${route.name}: saturation ${closed.rps} req/s (p99 ${closed.p99} ms); at ${rate} req/s p50 ${open.p50} ms, p99 ${open.p99} ms, max ${open.max} ms, non-2xx ${open.non2xx + closed.non2xx}, errors ${open.errors}; ${generatorLine(open)}`,
  );
  log(`${check(ok)} read-api-scale: ${route.name} p99 at half its saturation (${rate} req/s) < ${MAX_P99_MS} ms: ${open.p99} ms${stealNote(open)}`);
  return ok;
}

/** One closed loop of event batches on `server` (the data stays). */
async function ingest(server) {
  const run = await drive({ url: server.url, headers: server.headers, connections: CONNECTIONS, duration: DURATION, bodies: server.bodies });
  const result = summarise(run);
  log(
    `  ${server.label.padEnd(9)} ${result.eventsPerSecond} events/s (${result.batchesPerSecond} batches/s), p99 ${result.p99} ms, non-2xx ${result.non2xx}, errors ${result.errors}`,
  );
  return result;
}

async function main() {
  const scratch = await createScratchDatabase(adminUrl, 'ras');
  const apis = [];
  try {
    // Both with production's node flags (start:prod), as the other benches start the API.
    const nodeArgs = apiNodeArgs();
    const api = await startApi('api', apiEntry, root, scratch.url, { nodeArgs });
    apis.push(api);
    const bare = await startApi('norollups', apiEntry, root, scratch.url, { nodeArgs, env: { EVENT_ROLLUPS: 'false' } });
    apis.push(bare);
    const project = await mintReadProject(api.base, api.operatorToken);
    log(`bench: ${os.cpus().length} CPU(s), node ${process.version}; ${SCALE_EVENTS} events and ${SCALE_CUSTOMERS} customers`);
    const started = performance.now();
    await preload({ dbUrl: scratch.url, project: { id: project.projectId } });
    await seedReadScale(scratch.url, project.projectId, SCALE_CUSTOMERS);
    await settle(scratch.url);
    log(`bench: data loaded in ${seconds(started)} s`);

    const routes = selectRoutes(readApiRoutes(project, SCALE_CUSTOMERS), process.env.BENCH_READS);
    for (const route of routes) {
      const res = await fetch(api.base + route.next().path, { headers: route.headers });
      if (res.status !== 200) throw new Error(`${route.name}: ${res.status} ${await res.text()}`);
    }
    log('');
    log(`Reads: ${SATURATION_SECONDS} s closed loop over ${READ_CONNECTIONS} connections, then ${READ_DURATION} s open loop at half of it:`);
    let readsOk = 0;
    for (const route of routes) if (await measureRead(api, route)) readsOk++;

    log('');
    log(`Ingestion: ${ROUNDS} rotating round(s) of ${DURATION} s closed loop over ${CONNECTIONS} connections, into the preloaded database:`);
    const servers = [ingestionServer('api', api, bodySource({ pageUrls: true })), ingestionServer('norollups', bare, bodySource({ pageUrls: true }))];
    for (const server of servers)
      await drive({ url: server.url, headers: server.headers, connections: CONNECTIONS, duration: 3, bodies: bodySource({ pageUrls: true }) });
    const results = { api: [], norollups: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const server of round % 2 ? [...servers].reverse() : servers) {
        await settle(scratch.url);
        results[server.label].push(await ingest(server));
      }
    }
    const on = mean(results.api.map((r) => r.eventsPerSecond));
    const off = mean(results.norollups.map((r) => r.eventsPerSecond));
    const ratio = on / Math.max(1, off);
    const clean = [...results.api, ...results.norollups].every((r) => r.non2xx === 0 && r.errors === 0);
    log(`bench: reads within the goal: ${readsOk} of ${routes.length}`);
    log(
      `${check(ratio >= MIN_INGEST_RATIO && clean)} read-api-scale: ingestion with the rollups / without >= ${MIN_INGEST_RATIO}: ${ratio.toFixed(2)} (${on} vs ${off} events/s)`,
    );
  } finally {
    for (const api of apis.reverse()) await stop(api.proc);
    await scratch.drop();
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  process.exit(1);
});

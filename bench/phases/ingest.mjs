// Phases 1 and 2 of bench/run.mjs: ingestion throughput (closed loop, rotating rounds of every
// ingestion server) and ack latency (open loop at 70 % of the bare baseline's saturation).
import { EVENTS_PER_BATCH } from '../lib/event-bodies.mjs';
import {
  CONNECTIONS,
  DURATION,
  PHASES,
  REF_COMMIT,
  ROUNDS,
  WARMUP_SECONDS,
  coreShare,
  databaseStats,
  drive,
  generatorLine,
  leastStolen,
  log,
  mean,
  paced,
  quietStart,
  summarise,
  withCpu,
} from '../lib/harness.mjs';
import { NATS_URL, ingestionServer } from '../lib/servers.mjs';
import { bodySource } from '../lib/event-bodies.mjs';
import { stealPercent } from '../lib/paced-load.mjs';

/** Closed loop, as fast as CONNECTIONS connections go (on emptied tables unless keepData). */
export async function saturate(server, { keepData = false } = {}) {
  await server.buffer?.drained();
  if (!keepData) await quietStart(server);
  const dbBefore = await databaseStats(server.dbUrl);
  const selfBefore = process.cpuUsage();
  let drainSeconds = 0;
  const {
    value: run,
    serverSeconds,
    postgresSeconds,
    natsSeconds,
    stolen,
  } = await withCpu(
    server.pid,
    async () => {
      const result = await drive({ url: server.url, headers: server.headers, connections: CONNECTIONS, duration: DURATION, bodies: server.bodies });
      // The buffered path: the run is over when every acknowledged batch is stored.
      const ended = performance.now();
      await server.buffer?.drained();
      drainSeconds = (performance.now() - ended) / 1000;
      return result;
    },
    server.buffer?.natsPid,
  );
  const selfCpu = process.cpuUsage(selfBefore);
  const dbAfter = await databaseStats(server.dbUrl);
  const result = summarise(run);
  result.stolen = stolen;
  // Transactions and rows written in the server's database per acknowledged batch (the API and the baseline share one database, used in turn).
  result.commitsPerBatch = Math.round(((dbAfter.xact_commit - dbBefore.xact_commit) / Math.max(1, run['2xx'])) * 100) / 100;
  result.tuplesPerBatch = Math.round((dbAfter.tuples - dbBefore.tuples) / Math.max(1, run['2xx']));
  // WAL per batch, and how many of its records are full-page images (a page's first change after a checkpoint).
  result.walKbPerBatch = dbAfter.wal_bytes === null ? null : Math.round((dbAfter.wal_bytes - dbBefore.wal_bytes) / 1024 / Math.max(1, run['2xx']));
  const counterPerBatch = (key) => (dbAfter[key] === null ? null : Math.round(((dbAfter[key] - dbBefore[key]) / Math.max(1, run['2xx'])) * 10) / 10);
  result.fpiPerBatch = counterPerBatch('wal_fpi');
  // Pages the database's backends read from outside shared_buffers, and buffers any backend had to write itself to free one (server-wide).
  result.blocksReadPerBatch = counterPerBatch('blks_read');
  result.backendWritesPerBatch = counterPerBatch('buffers_backend');
  const perBatch = (seconds) => (seconds === null ? null : Math.round((seconds * 1000 * 100) / Math.max(1, run['2xx'])) / 100);
  result.cpuMsPerBatch = perBatch(serverSeconds);
  result.pgCpuMsPerBatch = perBatch(postgresSeconds);
  result.driverCpuMsPerBatch = perBatch((selfCpu.user + selfCpu.system) / 1e6);
  if (server.buffer) {
    result.drainSeconds = Math.round(drainSeconds * 10) / 10;
    result.storedPerSecond = Math.round((run['2xx'] * EVENTS_PER_BATCH) / (run.duration + drainSeconds));
    result.natsCpuMsPerBatch = perBatch(natsSeconds);
    log(
      `  ${server.label.padEnd(9)} stored every acknowledged batch ${result.drainSeconds} s after the load: ${result.storedPerSecond} events/s from the first request to the last commit; nats-server CPU/batch ${result.natsCpuMsPerBatch ?? '?'} ms (server and postgres below include the drain)`,
    );
  }
  log(
    `  ${server.label.padEnd(9)} saturation ${String(result.eventsPerSecond).padStart(6)} events/s (${result.batchesPerSecond} batches/s), p50 ${result.p50} ms, p99 ${result.p99} ms, ` +
      `non-2xx ${result.non2xx}, errors ${result.errors}; CPU/batch: server ${result.cpuMsPerBatch ?? '?'} ms, postgres (all local) ${result.pgCpuMsPerBatch ?? '?'} ms, load generator ${result.driverCpuMsPerBatch} ms; ` +
      `per batch in its database: ${result.commitsPerBatch} commits, ${result.tuplesPerBatch} rows written; WAL ${result.walKbPerBatch ?? '?'} KB (${result.fpiPerBatch ?? '?'} full-page images); ` +
      `${result.blocksReadPerBatch} pages read from outside shared_buffers, ${result.backendWritesPerBatch ?? '?'} buffers written by backends` +
      (stolen === null ? '' : `; CPU stolen by the host ${stealPercent(stolen)}`),
  );
  return result;
}

/** Open loop at `rate` batches/s, on emptied tables; with the CPU per batch of the server and of PostgreSQL at that rate (leastStolen). */
export const atRate = (server, rate) => leastStolen(`${server.label} at ${rate} batches/s`, () => oneWindowAtRate(server, rate));
export async function oneWindowAtRate(server, rate) {
  await server.buffer?.drained();
  await quietStart(server);
  let drain = '';
  const {
    value: result,
    serverSeconds,
    postgresSeconds,
  } = await withCpu(server.pid, async () => {
    const run = await paced({ url: server.url, headers: server.headers, connections: CONNECTIONS, duration: DURATION, rate });
    const ended = performance.now();
    await server.buffer?.drained();
    if (server.buffer) drain = `; every batch stored ${((performance.now() - ended) / 1000).toFixed(1)} s after the load`;
    return run;
  });
  const msPerBatch = (seconds) => (seconds === null ? null : (seconds * 1000) / Math.max(1, result.sent));
  const perBatch = (seconds) => (seconds === null ? '?' : Math.round(msPerBatch(seconds) * 100) / 100);
  log(
    `  ${server.label.padEnd(9)} ${rate} batches/s  ${String(result.eventsPerSecond).padStart(6)} events/s, p50 ${result.p50} ms, p99 ${result.p99} ms, max ${result.max} ms, ` +
      `non-2xx ${result.non2xx}, errors ${result.errors}; CPU/batch: server ${perBatch(serverSeconds)} ms (${coreShare(msPerBatch(serverSeconds), rate)}), postgres (all local) ${perBatch(postgresSeconds)} ms${drain}; ${generatorLine(result)}`,
  );
  return result;
}

/** The ingestion servers (api, ref, the bare baseline, and the buffered api when NATS answers), described, then warmed up unmeasured. */
export async function ingestionServers({ api, refApi, ref, baseline, basePort, apiDb, bufferedApi, buffer }) {
  const servers = [
    ingestionServer('api', api),
    ingestionServer('ref', refApi),
    { label: 'baseline', url: `http://127.0.0.1:${basePort}/v1/events`, headers: {}, pid: baseline.child.pid, bodies: bodySource(), dbUrl: apiDb.url },
    ...(bufferedApi ? [{ ...ingestionServer('buffered', bufferedApi), buffer }] : []),
  ];
  log('');
  log('api      = POST /v1/events through the service (this build)');
  log(`ref      = POST /v1/events through the service at ${REF_COMMIT} (the reference commit the goals compare with), built in ${ref.dir}`);
  log('baseline = bench/baseline.mjs (node:http, JSON.parse, the same single INSERT as this build)');
  if (bufferedApi)
    log(`buffered = this build with EVENTS_BUFFER_URL=${NATS_URL} (acknowledged after the JetStream append; counted until its consumer stored every batch)`);
  for (const server of servers)
    await drive({ url: server.url, headers: server.headers, connections: CONNECTIONS, duration: WARMUP_SECONDS, bodies: server.bodies });
  return servers;
}

/** Phase 1: ROUNDS rotating rounds of every server's closed-loop saturation; the mean events/s of each. */
export async function throughputPhase(servers) {
  log('');
  log(`1. Throughput: ${CONNECTIONS} connections, closed loop, ${ROUNDS} rotating round(s) of ${DURATION} s each:`);
  const saturation = { api: [], ref: [], baseline: [], buffered: [] };
  for (let round = 0; round < (PHASES.has('ingest') || PHASES.has('latency') ? ROUNDS : 0); round++) {
    const order = [...servers.slice(round % servers.length), ...servers.slice(0, round % servers.length)];
    for (const server of order) saturation[server.label].push(await leastStolen(`${server.label} saturation`, () => saturate(server)));
  }
  return {
    saturation,
    apiEvents: mean(saturation.api.map((r) => r.eventsPerSecond)),
    refEvents: mean(saturation.ref.map((r) => r.eventsPerSecond)),
    baseEvents: mean(saturation.baseline.map((r) => r.eventsPerSecond)),
    bufferedEvents: mean(saturation.buffered.map((r) => r.eventsPerSecond)),
    bufferedStored: mean(saturation.buffered.map((r) => r.storedPerSecond)),
  };
}

/** Phase 2: every server open loop at 70 % of the baseline's saturation (or BENCH_LATENCY_RATE). */
export async function latencyPhase(servers, baseEvents) {
  const latencyRate = Number(process.env.BENCH_LATENCY_RATE) || Math.max(1, Math.round((baseEvents * 0.7) / EVENTS_PER_BATCH));
  log('');
  log(
    `2. Ack latency at 70 % of the baseline's saturation = ${latencyRate} batches/s (steady, open loop, ${CONNECTIONS} keep-alive connections, ${DURATION} s):`,
  );
  const target = {};
  if (PHASES.has('latency')) for (const server of servers) target[server.label] = await atRate(server, latencyRate);
  return { latencyRate, target };
}

// The benchmark's shared harness (bench/run.mjs runs the phases with it): the run's settings,
// the load drivers (closed loop with autocannon, open loop paced from a worker thread), the
// steal rule (a measured window the host took CPU from is measured again), CPU sampling of the
// server and PostgreSQL, and the scratch databases' settling between measured windows.
import autocannon from 'autocannon';
import { ROOT as root, sh, apiNodeArgs as benchApiNodeArgs, cpuSeconds, samplePostgresCpu, withClient } from './common.mjs';
import { cpuSteal, pacedLoad, plannedRequests, stealPercent } from './paced-load.mjs';
import { EVENTS_PER_BATCH } from './event-bodies.mjs';

export const DURATION = Number(process.env.BENCH_DURATION ?? 15);
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
export const WARMUP_SECONDS = 3;
export const REF_COMMIT = process.env.BENCH_REF_COMMIT ?? '84a29e2';
/** BENCH_PHASES: a subset of ingest,latency,reads,scale for development runs (default: all; the goals of skipped phases are not printed). */
export const PHASES = new Set(
  (process.env.BENCH_PHASES ?? 'ingest,latency,reads,scale,webhooks,tracing,sourcemaps-bounds,card-lifecycle,charts-console').split(','),
);

export const log = (line = '') => process.stdout.write(`${line}\n`);

/** The api and buffered servers' node flags: start:prod's, then BENCH_API_NODE_ARGS (common.mjs). */
export const apiNodeArgs = benchApiNodeArgs();

/** The admin database (DATABASE_URL), checked at start (setAdminUrl). */
export let adminUrl;
export function setAdminUrl(url) {
  adminUrl = url;
}

// ---- load ---------------------------------------------------------------------------------

export function drive({ url, headers, connections, duration, bodies, next }) {
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
              if (!next) {
                request.body = bodies.next();
                return request;
              }
              const r = next();
              request.method = r.method;
              request.path = r.path;
              if (r.body === undefined) delete request.body;
              else request.body = r.body;
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
 * Open-loop load at a steady rate (bench/lib/paced-load.mjs, in a worker thread of its own):
 * latency from each request's due time, no coordinated omission. The first LEAD_IN_SECONDS
 * run at the same rate and are not measured: a server that sat idle while the others were
 * measured (its JIT and heap shrink back, the first run showed a second of catching up) is
 * measured at the steady rate, as the goal reads, not on its way there. Every server gets the
 * same lead-in. Read routes give their requests (`next`), ingestion sends the event batches.
 */
export const LEAD_IN_SECONDS = Number(process.env.BENCH_LEAD_IN ?? 2);
export async function paced({ url, headers, connections, duration, rate, next, perRequest = EVENTS_PER_BATCH }) {
  const timing = { rate, duration, leadInSeconds: LEAD_IN_SECONDS };
  const run = await pacedLoad({
    url,
    headers,
    connections,
    ...timing,
    ...(next ? { requests: plannedRequests(next, timing) } : { events: true }),
    debug: Boolean(process.env.BENCH_DEBUG),
  });
  if (run.slowest) {
    log(`    phase started at ${run.startedAt}`);
    log(`    slowest (ms @ ms into the phase): ${run.slowest.map(([l, t]) => `${Math.round(l)}@${Math.round(t)}`).join(' ')}`);
  }
  return {
    sent: run.sent,
    eventsPerSecond: Math.round((run.ok * perRequest) / run.elapsed),
    batchesPerSecond: Math.round((run.ok / run.elapsed) * 10) / 10,
    p50: run.p50,
    p99: run.p99,
    max: run.max,
    non2xx: run.non2xx,
    errors: run.errors,
    generator: run.generator,
  };
}

/** The share of the machine's CPU the host took (steal) in a measured window: closed-loop results carry `stolen`, paced ones `generator.machine.stolen`; null or undefined without /proc. */
export const stealOf = (window) => window?.stolen ?? window?.generator?.machine?.stolen;

/**
 * A measured window (closed or open loop) in which the host took more than BENCH_STEAL_LIMIT
 * of the machine's CPU (steal, /proc/stat; 2 %, against under 1 % in quiet windows) is
 * measured again, at most BENCH_STEAL_RETRIES (2) more times, and the try with the least steal
 * counts: a window the hypervisor took a fifth of the CPU from measures the host, not the
 * servers, and in a ratio it favours whichever side was spared (docs/performance.md). The
 * choice depends on the steal alone, never on what was measured, every server's windows get
 * the same rule, and every discarded try is printed.
 */
export const STEAL_LIMIT = Number(process.env.BENCH_STEAL_LIMIT ?? 0.02);
export const STEAL_RETRIES = Number(process.env.BENCH_STEAL_RETRIES ?? 2);
export async function leastStolen(label, measure) {
  const tries = [];
  for (;;) {
    const result = await measure();
    tries.push(result);
    const stolen = stealOf(result);
    if (typeof stolen !== 'number' || stolen <= STEAL_LIMIT) return result;
    if (tries.length > STEAL_RETRIES) break;
    log(`    ${label}: the host took ${stealPercent(stolen)} of the CPU in this window; measured again`);
  }
  const kept = tries.reduce((best, r) => (stealOf(r) < stealOf(best) ? r : best));
  log(`    ${label}: steal above ${stealPercent(STEAL_LIMIT)} in all ${tries.length} tries; the one with the least (${stealPercent(stealOf(kept))}) counts`);
  return kept;
}

/** The load generator's own stalls and the machine's pressure stall time in a paced run's measured window, for its log line. */
export const generatorLine = ({ generator: g }) =>
  `load generator: loop delay max ${g.loopDelayMax} ms (p99 ${g.loopDelayP99}), GC max ${g.gcMax} ms (${g.gcTotal} ms in all)` +
  (g.machine ? `; machine stalled on I/O ${g.machine.ioSome} ms (all tasks ${g.machine.ioFull} ms), waiting for a CPU ${g.machine.cpuSome} ms` : '') +
  (g.machine?.stolen != null ? `, CPU stolen by the host ${stealPercent(g.machine.stolen)}` : '');

/** The largest share of the CPU the host took (stealOf) in the windows a goal was measured in, for its line. */
export function stealNote(...windows) {
  const shares = windows.map(stealOf).filter((v) => typeof v === 'number');
  return shares.length === 0 ? '' : `; CPU steal in its windows up to ${stealPercent(Math.max(...shares))}`;
}

export function summarise(result) {
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

/**
 * Runs `work`; answers its value with the CPU seconds the server process and the local postgres
 * processes used meanwhile (sampled: an autovacuum worker that exits meanwhile counts too; null
 * where /proc is missing) and the share of the machine's CPU the host took meanwhile (`stolen`).
 */
export async function withCpu(pid, work, natsPid) {
  const steal = cpuSteal();
  const server0 = cpuSeconds(pid);
  const postgres = samplePostgresCpu();
  const nats0 = natsPid ? cpuSeconds(natsPid) : null;
  const value = await work();
  const server1 = cpuSeconds(pid);
  const nats1 = natsPid ? cpuSeconds(natsPid) : null;
  const { seconds: postgresSeconds, byKind } = postgres.stop();
  const stolen = steal.stop();
  if (process.env.BENCH_DEBUG && postgresSeconds !== null)
    log(
      `    postgres CPU by process: ${[...byKind]
        .filter(([, s]) => s >= 0.005)
        .map(([kind, s]) => `${kind} ${s.toFixed(2)} s`)
        .join(', ')}`,
    );
  return {
    value,
    serverSeconds: server0 === null || server1 === null ? null : server1 - server0,
    postgresSeconds,
    natsSeconds: nats0 === null || nats1 === null ? null : nats1 - nats0,
    stolen,
  };
}

export function truncate(benchUrl) {
  return withClient(benchUrl, async (client) => {
    // One table per statement: each takes one lock, so the API's background resolver
    // (hint set, then its events) cannot deadlock with it.
    for (const table of ['event_identity_hints', 'events', 'error_issues']) await client.query(`TRUNCATE ${table}`);
    await client.query('CHECKPOINT');
  });
}

/** Every scratch database of this run (scratchDatabase): settled by quietStart, dropped at the end. */
export const scratchDatabases = [];

/**
 * Before each measured ingestion run on emptied tables: the other scratch databases vacuumed,
 * analyzed and checkpointed (the autovacuum that an earlier server's rows are due must not
 * land in this server's window: on two cores a worker analyzing a million-row table took
 * 0.5 s of CPU there), this server's tables emptied and checkpointed, then `sync`. The files
 * a truncate frees are released at the file system's next journal commit, up to 5 s later;
 * on a disk mounted with online discard (this machine's ext4) that stalls every fsync,
 * PostgreSQL's WAL flush included, for tens of milliseconds, which had fallen inside the
 * window. `sync` makes that commit now (docs/performance.md, "Method").
 */
export async function quietStart(server) {
  for (const { url } of scratchDatabases) if (url !== server.dbUrl) await settle(url);
  await truncate(server.dbUrl);
  await sh('sync', [], root).catch(() => undefined);
}

/**
 * After the ingestion phases: vacuum, analyze and checkpoint the API's database, so that the
 * autovacuum and checkpoint work the ingestion left behind does not run inside the read
 * phase's measurement (the scale phase's preload ends the same way).
 */
export function settle(url) {
  return withClient(url, async (client) => {
    await client.query('VACUUM ANALYZE');
    await client.query('CHECKPOINT');
  });
}

/**
 * Commits and rows inserted/updated/deleted so far in the database of `url`
 * (pg_stat_database), full-page images so far (pg_stat_wal, PostgreSQL 14+: the whole server,
 * which only the measured server writes to during its phase, but for the API's background
 * resolver and autovacuum), and the WAL position, whose difference is the exact WAL written.
 * PostgreSQL 15 reports an idle backend's counters up to 10 s after its last statement, so
 * the counters are read after STATS_SETTLE_MS.
 */
export const STATS_SETTLE_MS = 11_000;
export async function databaseStats(url) {
  await new Promise((r) => setTimeout(r, STATS_SETTLE_MS));
  return withClient(url, async (client) => {
    const { rows } = await client.query(
      `SELECT xact_commit::float8 AS xact_commit, (tup_inserted + tup_updated + tup_deleted)::float8 AS tuples, blks_read::float8 AS blks_read,
              pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8 AS wal_bytes
         FROM pg_stat_database WHERE datname = current_database()`,
    );
    const fpi = await client.query(`SELECT wal_fpi::float8 AS wal_fpi FROM pg_stat_wal`).catch(() => ({ rows: [{ wal_fpi: null }] }));
    const bgwriter = await client
      .query(`SELECT buffers_backend::float8 AS buffers_backend FROM pg_stat_bgwriter`)
      .catch(() => ({ rows: [{ buffers_backend: null }] }));
    return { ...rows[0], ...fpi.rows[0], ...bgwriter.rows[0] };
  });
}

/** The mean of `values`, rounded to `digits` decimals (whole numbers by default). */
export const mean = (values, digits = 0) => {
  const factor = 10 ** digits;
  return Math.round((values.reduce((a, b) => a + b, 0) / Math.max(1, values.length)) * factor) / factor;
};
export const check = (ok) => (ok ? 'ok  ' : 'MISS');

/** CPU seconds spent over `requests` requests, as milliseconds per request (null when not measured). */
export const cpuMsPerRequest = (seconds, requests) => (seconds === null ? null : Math.round((seconds * 1e6) / Math.max(1, requests)) / 1000);

/**
 * How busy a server process is at a steady `rate` (per second) given its CPU per request or
 * batch in ms: a single-threaded server's queueing, and so its tail, follows this figure.
 */
export const coreShare = (cpuMs, rate) => (cpuMs === null || cpuMs === undefined ? '? % of one core' : `${Math.round((cpuMs * rate) / 10)} % of one core`);

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

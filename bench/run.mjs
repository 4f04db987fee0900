// `npm run bench` (= npm run build && node bench/run.mjs): the performance benchmark. Every goal
// is a ratio or a latency measured in this one run, so it holds on any machine. Never part
// of `npm test`.
//
// Servers (each API on its own scratch database on the DATABASE_URL server, dropped after):
//   api       this build (dist/), NODE_ENV=production, started with start:prod's node flags,
//             project/app/keys minted through the operator API, buckets raised (the run
//             measures work, not throttling)
//   ref       commit BENCH_REF_COMMIT (84a29e2, the reference commit the goals compare with): its tree exported
//             with `git archive` into $TMPDIR/bench-ref-<commit> (outside the repository),
//             node_modules linked to ours (or `npm ci` with BENCH_REF_INSTALL=ci), built with
//             its own `nest build`; reused while that dist/ exists
//   baseline  bench/baseline.mjs: node:http + JSON.parse + this build's single INSERT for
//             events; for reads, the very statements the API issued for one warmed-up request
//             of each route (recorded by a throw-away API copy preloaded with
//             bench/capture-sql.mjs), replayed over node:http
//   buffered  this build with the optional JetStream buffer (EVENTS_BUFFER_URL=BENCH_NATS_URL,
//             default nats://127.0.0.1:4222, a stream of its own, deleted after): acknowledged
//             after the append, written by its consumer; run in phases 1 and 2 when a NATS
//             server answers. Its figures count until the consumer has stored every batch
//             (CPU of server, PostgreSQL and nats-server included), besides the acks.
// Phases (ingestion bodies: realistic 100-event web batches with fresh eventIds; before each
// measured ingestion run the other scratch databases are vacuumed and this server's tables
// emptied, checkpointed and synced to disk, quietStart):
//   1 throughput  autocannon, BENCH_CONNECTIONS (32), closed loop, BENCH_ROUNDS (2) rotating
//                 rounds of api / ref / baseline     -> api/ref (goal >= 1.5), api/baseline
//   2 latency     open loop at 70 % of the baseline's saturation, latency from each
//                 request's due time (no coordinated omission; generated in a worker thread
//                 of its own, bench/lib/paced-load.mjs), after an unmeasured lead-in
//                 at the same rate; CPU per batch of server and PostgreSQL at that rate
//                                                               -> api p99 (goal < 50 ms)
//   3 reads       GET /v1/entitlements (publishable key), GET /v1/server/customers/{id}/
//                 entitlements, POST /v1/identify (known pair), POST /v1/resolve, over
//                 BENCH_READ_USERS (2000) seeded users: closed loop api vs bare, BENCH_READ_ROUNDS
//                 (2) alternating rounds (api, bare, bare prepared; then the reverse), means
//                 compared (ratio >= 0.5 to bare, whose statements are plain as pg sends them
//                 by default; the ratio to bare prepared, which prepares what the API prepares,
//                 is printed beside it), then api open loop at 50 % of the bare saturation
//                 (p99 < 10 ms)
//   4 scale       BENCH_SCALE_EVENTS (200,000) events and BENCH_SCALE_CUSTOMERS (20,000)
//                 customers preloaded with generate_series; ingestion throughput right after
//                 the preload's checkpoint (printed) and after BENCH_SCALE_WARMUP s more (goal
//                 within 20 % of the empty database) and the public entitlement read p99 at half
//                 the API's own saturation of it (phase 3), before and after the preload
//                 (goal: unchanged, read as <= 1.25x or +1 ms). The case the goal names:
//                 BENCH_SCALE_EVENTS=10000000 BENCH_SCALE_CUSTOMERS=1000000.
//
// Environment: DATABASE_URL (required), BENCH_DURATION (s per ingestion run, 15), BENCH_ROUNDS
// (2), BENCH_CONNECTIONS (32), BENCH_READ_DURATION (10), BENCH_READ_CONNECTIONS (16),
// BENCH_READ_USERS (2000), BENCH_SCALE_EVENTS, BENCH_SCALE_CUSTOMERS, BENCH_PHASES (subset of
// ingest,latency,reads,scale,webhooks,tracing,sourcemaps-bounds,card-lifecycle,charts-console; the
// last five run their own scripts, bench/<phase>.mjs, after the others), BENCH_READ_ROUTES (indexes 0-3), LOG_LEVEL (warn), DB_POOL_SIZE,
// BENCH_KEEP_DB=1, BENCH_API_PLAIN_NODE=1 (the api without start:prod's node flags),
// BENCH_API_NODE_ARGS / BENCH_REF_NODE_ARGS / BENCH_BASELINE_NODE_ARGS (e.g.
// "--cpu-prof --cpu-prof-dir=/tmp/prof"), BENCH_DEBUG=1 (slowest requests of the paced runs,
// each server's start time), BENCH_CHILD_LOG (a file the servers' output is appended to, e.g.
// with "--trace-gc"), BENCH_LEAD_IN (s, 2), BENCH_READ_WARMUP (s of unmeasured load on each
// server before each read route, and on the api before each of the scale phase's reads, 5),
// BENCH_READ_ROUNDS (closed-loop rounds per server and read route, alternating, 2),
// BENCH_STEAL_LIMIT (0.02) / BENCH_STEAL_RETRIES (2): a measured window in which the host
// took more of the CPU (steal) is measured again, the try with the least steal counting;
// BENCH_SCALE_WARMUP (s of unmeasured ingestion between
// the scale phase's run right after the preload's checkpoint and its goal run, 45), BENCH_LATENCY_RATE (batches/s of phase 2 instead of 70 %
// of the baseline's saturation, for development runs), BENCH_NATS_URL (empty: no buffered
// server).
// `node bench/run.mjs --sample-body` prints one body.
//
// Files: bench/lib/harness.mjs (settings, load drivers, the steal rule, CPU and database
// sampling), bench/lib/servers.mjs (scratch databases, reference build, API and buffer
// servers), bench/phases/ingest.mjs (phases 1 and 2), reads.mjs (3), scale.mjs (4), goals.mjs.
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { API_ENTRY as apiEntry, ROOT as root, stop, killChildren, requireDatabaseAndBuild } from './lib/common.mjs';
import { bodySource } from './lib/event-bodies.mjs';
import { CONNECTIONS, DURATION, PHASES, REF_COMMIT, apiNodeArgs, log, scratchDatabases, setAdminUrl } from './lib/harness.mjs';
import { NATS_URL, benchBuffer, referenceBuild, scratchDatabase, startApi } from './lib/servers.mjs';
import { ingestionServers, latencyPhase, throughputPhase } from './phases/ingest.mjs';
import { prepareReads, readsPhase } from './phases/reads.mjs';
import { scalePhase } from './phases/scale.mjs';
import { printGoals } from './phases/goals.mjs';

/** Phases that are scripts of their own (bench/<phase>.mjs), run after the others. */
const STANDALONE_PHASES = ['webhooks', 'tracing', 'sourcemaps-bounds', 'card-lifecycle', 'charts-console'];

async function main() {
  const procs = [];
  let buffer = null;
  try {
    log(
      `bench: ${os.cpus().length} CPU(s), node ${process.version}, ${CONNECTIONS} connections, ${DURATION} s per phase, LOG_LEVEL=${process.env.LOG_LEVEL ?? 'warn'}, load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    const ref = await referenceBuild();

    const apiDb = await scratchDatabase('api');
    const refDb = await scratchDatabase('ref');
    const api = await startApi('api', apiEntry, root, apiDb.url, { nodeArgs: apiNodeArgs, withSecret: true });
    procs.push(api.proc);
    const refApi = await startApi(`ref ${REF_COMMIT}`, ref.entry, ref.dir, refDb.url, { nodeArgs: process.env.BENCH_REF_NODE_ARGS });
    procs.push(refApi.proc);
    buffer = PHASES.has('ingest') || PHASES.has('latency') ? await benchBuffer() : null;
    let bufferedApi;
    if (buffer) {
      const bufferedDb = await scratchDatabase('buffered');
      bufferedApi = await startApi('buffered', apiEntry, root, bufferedDb.url, {
        nodeArgs: apiNodeArgs,
        env: { EVENTS_BUFFER_URL: NATS_URL, EVENTS_BUFFER_STREAM: buffer.stream },
      });
      procs.push(bufferedApi.proc);
      await buffer.ready();
    }

    const { routes, readsFile, basePort, baseline, bare } = await prepareReads(api, apiDb, procs);
    const servers = await ingestionServers({ api, refApi, ref, baseline, basePort, apiDb, bufferedApi, buffer });
    const throughput = await throughputPhase(servers);
    const latency = await latencyPhase(servers, throughput.baseEvents);
    const readResults = await readsPhase(routes, api, bare);
    const scale = PHASES.has('scale') ? await scalePhase({ api, bare, routes, readResults, servers }) : null;
    printGoals({ servers, bufferedApi, throughput, latency, readResults, scale });
    rmSync(readsFile, { force: true });
  } finally {
    for (const proc of procs.reverse()) await stop(proc);
    await buffer?.close();
    for (const db of scratchDatabases) await db.drop();
  }
}

process.once('SIGINT', () => {
  killChildren();
  process.exit(130);
});

if (process.argv[2] === '--sample-body') {
  // Prints one request body (to inspect what the benchmark sends).
  process.stdout.write(`${JSON.stringify(JSON.parse(bodySource().next()), null, 2)}\n`);
} else {
  setAdminUrl(requireDatabaseAndBuild('LOG_LEVEL=warn npm run bench', 'run "npm run bench" (it builds first) or "npm run build"'));
  const corePhases = ['ingest', 'latency', 'reads', 'scale'].some((phase) => PHASES.has(phase));
  (corePhases ? main() : Promise.resolve())
    .then(() => {
      // Phases with servers and stand-ins of their own: each script prints its ok/MISS lines.
      for (const phase of STANDALONE_PHASES.filter((name) => PHASES.has(name))) {
        const run = spawnSync(process.execPath, [path.join(import.meta.dirname, `${phase}.mjs`)], { stdio: 'inherit' });
        if (run.status !== 0) throw new Error(`bench/${phase}.mjs exited with ${run.status ?? run.signal}`);
      }
    })
    .catch((err) => {
      process.stderr.write(`bench failed: ${err.stack ?? err}\n`);
      killChildren();
      process.exit(1);
    });
}

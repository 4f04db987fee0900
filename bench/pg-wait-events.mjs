// What PostgreSQL's client backends are waiting on, sampled while a bench runs
// (docs/performance.md, "Other benches"): every WAIT_INTERVAL_MS it
// reads pg_stat_activity's active client backends (their wait event, or "CPU" when they wait
// on nothing) and, at the end, prints how often each wait was seen and the moments when
// WAIT_MIN_BACKENDS or more backends waited on I/O or a lock at once (the stalls that every
// connection sees together), to be matched with the bench's slowest requests
// (BENCH_DEBUG=1 prints them with the phase's start time).
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5440/postgres WAIT_SECONDS=300 node bench/pg-wait-events.mjs &
//   DATABASE_URL=postgres://postgres@127.0.0.1:5440/postgres BENCH_PHASES=latency BENCH_DEBUG=1 node bench/run.mjs
//
// Environment: DATABASE_URL (required; any database of the server), WAIT_SECONDS (how long,
// 120), WAIT_INTERVAL_MS (10), WAIT_MIN_BACKENDS (4), WAIT_DATABASE_PREFIX (only backends of
// databases whose name starts with it, e.g. bench_api for the bench's API), WAIT_TIMELINE=1
// (also each second's backend-samples per wait).
import pg from 'pg';

const url = process.env.DATABASE_URL;
if (!url) {
  process.stderr.write('bench: DATABASE_URL is required, e.g. DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/pg-wait-events.mjs\n');
  process.exit(2);
}
const SECONDS = Number(process.env.WAIT_SECONDS ?? 120);
const INTERVAL_MS = Number(process.env.WAIT_INTERVAL_MS ?? 10);
const MIN_BACKENDS = Number(process.env.WAIT_MIN_BACKENDS ?? 4);
const DATABASE_PREFIX = process.env.WAIT_DATABASE_PREFIX ?? '';

const SAMPLE = `SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU') AS wait, count(*)::int AS n
                  FROM pg_stat_activity
                 WHERE backend_type = 'client backend' AND state = 'active' AND pid <> pg_backend_pid()
                   AND starts_with(datname, $1)
                 GROUP BY 1`;

const client = new pg.Client({ connectionString: url });
await client.connect();
const totals = new Map();
/** [wall ms, wait, backends] of each sample where MIN_BACKENDS or more waited on the same I/O or lock. */
const stalls = [];
/** Per wall second: Map of wait -> backend-samples. */
const seconds = new Map();
let samples = 0;
const until = Date.now() + SECONDS * 1000;
while (Date.now() < until) {
  const at = Date.now();
  const { rows } = await client.query({ name: 'sample', text: SAMPLE, values: [DATABASE_PREFIX] });
  samples++;
  for (const { wait, n } of rows) {
    totals.set(wait, (totals.get(wait) ?? 0) + n);
    const second = Math.floor(at / 1000);
    if (!seconds.has(second)) seconds.set(second, new Map());
    seconds.get(second).set(wait, (seconds.get(second).get(wait) ?? 0) + n);
    if (n >= MIN_BACKENDS && /^(IO|Lock|LWLock):/.test(wait)) stalls.push([at, wait, n]);
  }
  const rest = INTERVAL_MS - (Date.now() - at);
  if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest));
}
await client.end();

process.stdout.write(`${samples} samples of active client backends, every ${INTERVAL_MS} ms; backend-samples per wait:\n`);
for (const [wait, n] of [...totals].sort((a, b) => b[1] - a[1])) process.stdout.write(`  ${wait.padEnd(36)} ${n}\n`);
process.stdout.write(`moments with >= ${MIN_BACKENDS} backends on one I/O or lock wait (wall ms, wait, backends), runs of samples merged:\n`);
let run;
const flush = () => run && process.stdout.write(`  ${run.from} - ${run.to} (${run.to - run.from} ms) ${run.wait} up to ${run.max}\n`);
for (const [at, wait, n] of stalls) {
  if (run && run.wait === wait && at - run.to <= INTERVAL_MS * 3) {
    run.to = at;
    run.max = Math.max(run.max, n);
    continue;
  }
  flush();
  run = { from: at, to: at, wait, max: n };
}
flush();

if (process.env.WAIT_TIMELINE) {
  process.stdout.write('per second (wall s: backend-samples per wait, busiest first):\n');
  for (const [second, waits] of seconds)
    process.stdout.write(
      `  ${second}: ${[...waits]
        .sort((a, b) => b[1] - a[1])
        .map(([w, n]) => `${w} ${n}`)
        .join(', ')}\n`,
    );
}

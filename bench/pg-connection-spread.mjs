// PostgreSQL's CPU per request against the number of pooled connections the requests are
// spread over, with and without CPU work in the client between its statements
// (docs/performance.md, "What the measurements showed"). Each request runs the entitlement read's two
// shapes as named prepared statements (an alias probe, then the customer's active rows) on a
// scratch database of its own, 16 requests at a time from one Node process. The client work
// (busy-waiting, default 0.5 ms per request) stands in for the API's own CPU per read; it
// keeps each connection checked out until the event loop reads the answer, which spreads
// the statements over more of the pool.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench:pg-spread
//
// Environment: DATABASE_URL (required), SPREAD_POOLS (2,4,10), SPREAD_WORK_US (0,500),
// SPREAD_REQUESTS (15000 per run), SPREAD_CONCURRENCY (16), SPREAD_ROUNDS (2; each round
// runs every combination, the second in reverse order).
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { createScratchDatabase, growthOverPids, perPostgresProcess, postgresCpu, withClient } from './lib/common.mjs';

const list = (name, fallback) => (process.env[name] ?? fallback).split(',').map(Number);
const POOLS = list('SPREAD_POOLS', '2,4,10');
const WORK_US = list('SPREAD_WORK_US', '0,500');
const REQUESTS = Number(process.env.SPREAD_REQUESTS ?? 15_000);
const CONCURRENCY = Number(process.env.SPREAD_CONCURRENCY ?? 16);
const ROUNDS = Number(process.env.SPREAD_ROUNDS ?? 2);
const CUSTOMERS = 20_000;
const PROJECT = '00000000-0000-4000-8000-000000000001';

const FIND_ALIAS = {
  name: 'spread_alias',
  text: 'SELECT customer_id FROM aliases WHERE project_id = $1 AND env = $2 AND type = $3 AND value = $4',
};
const FIND_ACTIVE = {
  name: 'spread_active',
  text: `SELECT customer_id, entitlement_key, rail, state, valid_until FROM entitlements
          WHERE project_id = $1 AND env = $2 AND customer_id = $3
            AND state = 'active' AND (valid_until IS NULL OR valid_until > $4)
          ORDER BY entitlement_key, rail`,
};

const adminUrl = process.env.DATABASE_URL;
if (!adminUrl) {
  process.stderr.write('bench: DATABASE_URL is required, e.g. DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench:pg-spread\n');
  process.exit(2);
}

/** Keeps this thread on the CPU for `us` microseconds, as request handling would. */
function work(us) {
  const until = process.hrtime.bigint() + BigInt(Math.round(us * 1000));
  while (process.hrtime.bigint() < until);
}

/** Context switches so far (voluntary and not) of each local postgres process. */
const postgresSwitches = () =>
  perPostgresProcess((pid) => {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const count = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)$`, 'm').exec(status)?.[1] ?? 0);
    return count('voluntary_ctxt_switches') + count('nonvoluntary_ctxt_switches');
  });

async function seed(url) {
  await withClient(url, async (client) => {
    await client.query(`CREATE TABLE aliases (project_id uuid, env text, type text, value text, customer_id text,
                          PRIMARY KEY (project_id, env, type, value))`);
    await client.query(`CREATE TABLE entitlements (project_id uuid, env text, customer_id text, entitlement_key text, rail text,
                          state text, valid_until timestamptz, PRIMARY KEY (project_id, env, customer_id, entitlement_key, rail))`);
    await client.query(`INSERT INTO aliases SELECT $1, 'sandbox', 'user', 'u' || i, 'c' || i FROM generate_series(1, $2) i`, [PROJECT, CUSTOMERS]);
    await client.query(`INSERT INTO entitlements SELECT $1, 'sandbox', 'c' || i, 'pro', 'manual', 'active', NULL FROM generate_series(1, $2) i`, [
      PROJECT,
      CUSTOMERS,
    ]);
    await client.query('VACUUM ANALYZE');
  });
}

/** One run: REQUESTS reads, CONCURRENCY at a time, over a pool of `poolSize`, `workUs` of client CPU per read. */
async function run(url, poolSize, workUs) {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  const read = async (i) => {
    work(workUs / 2);
    const { rows } = await pool.query(FIND_ALIAS, [PROJECT, 'sandbox', 'user', `u${1 + (i % CUSTOMERS)}`]);
    work(workUs / 4);
    await pool.query(FIND_ACTIVE, [PROJECT, 'sandbox', rows[0].customer_id, new Date()]);
    work(workUs / 4);
  };
  let next = 0;
  const loop = async (count) => {
    while (next < count) await read(next++);
  };
  // Every connection opened and its statements prepared before the measurement.
  await Promise.all(Array.from({ length: poolSize }, async (_, i) => read(i)));
  await loop(2_000);
  next = 0;
  const postgres0 = postgresCpu();
  const switches0 = postgresSwitches();
  const client0 = process.cpuUsage();
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, () => loop(REQUESTS)));
  const seconds = (performance.now() - started) / 1000;
  const postgresSeconds = growthOverPids(postgres0, postgresCpu());
  const switches = growthOverPids(switches0, postgresSwitches());
  const client = process.cpuUsage(client0);
  await pool.end();
  return {
    perSecond: Math.round(REQUESTS / seconds),
    postgresMs: postgresSeconds === null ? null : (postgresSeconds * 1000) / REQUESTS,
    postgresSwitches: switches === null ? null : switches / REQUESTS,
    clientMs: (client.user + client.system) / 1000 / REQUESTS,
  };
}

const { url, drop } = await createScratchDatabase(adminUrl, 'spread');
try {
  await seed(url);
  const combos = POOLS.flatMap((poolSize) => WORK_US.map((workUs) => ({ poolSize, workUs, runs: [] })));
  for (let round = 0; round < ROUNDS; round++) {
    for (const combo of round % 2 === 0 ? combos : [...combos].reverse()) combo.runs.push(await run(url, combo.poolSize, combo.workUs));
  }
  const column = (runs, field, digits, width) =>
    runs
      .map((r) => (r[field] === null ? 'n/a' : r[field].toFixed(digits)))
      .join(', ')
      .padEnd(width);
  console.log(`${CONCURRENCY} concurrent reads of two prepared statements, ${REQUESTS} per run, ${ROUNDS} round(s):`);
  console.log('pool  client work/read  reads/s           PostgreSQL CPU/read (ms)  its context switches/read  client CPU/read (ms)');
  for (const { poolSize, workUs, runs } of combos) {
    console.log(
      String(poolSize).padEnd(6) +
        `${workUs} µs`.padEnd(17) +
        column(runs, 'perSecond', 0, 18) +
        column(runs, 'postgresMs', 3, 26) +
        column(runs, 'postgresSwitches', 2, 27) +
        column(runs, 'clientMs', 3, 0),
    );
  }
} finally {
  await drop();
}

// PostgreSQL's cost of the API's own events insert on schema variants
// (docs/performance.md, "What the measurements showed"): which index or column
// choice is worth a migration, measured before writing one.
//
// Each variant gets a scratch database built by the real migrations (dist/apps/api/src/
// migrate.js), then the variant's DDL. The statement is the one the API sends for new events
// (FIRST_DELIVERY_*_SQL from dist/, first deliveries, REPLAY_BATCHES bench batches merged
// into one statement as the group commit does under load), its rows made by the API's own
// validator from the bench's realistic bodies (bench/lib/event-bodies.mjs). Every variant is
// first filled with REPLAY_PRELOAD events by the same statement (not measured), then
// REPLAY_ROUNDS rounds run REPLAY_STATEMENTS statements on each variant in turn, on one
// connection each (the order reversed every other round). Measured per round: the backend's
// CPU (/proc/<pg_backend_pid()>/stat), wall time and WAL bytes per 100-event batch; at the
// end, each index's size per stored event.
//
//   npm run build
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench:pg-insert
//   # a profile of one variant's backend: its pid is printed before the rounds, e.g.
//   #   perf record --call-graph dwarf -p <pid> -o /tmp/perf.data -- sleep 20
//
// Environment: DATABASE_URL (required), REPLAY_VARIANTS (comma list of the names below,
// default all), REPLAY_PRELOAD (200000 events), REPLAY_STATEMENTS (60 per variant and round),
// REPLAY_BATCHES (5 per statement), REPLAY_ROUNDS (4), REPLAY_START_DELAY (s to wait after
// printing the backends' pids, 0), BENCH_KEEP_DB=1 (keep the scratch databases).
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { ROOT, createScratchDatabase, cpuSeconds, requireDatabaseAndBuild, sh } from './lib/common.mjs';
import { EVENTS_PER_BATCH, bodySource } from './lib/event-bodies.mjs';
import { validateEvents } from '../dist/libs/telemetry/src/ingest/event-batch.validator.js';
import { concatEncodedRows, encodeBatch, insertStatementOf } from '../dist/libs/telemetry/src/storage/event-insert.sql.js';

const PRELOAD = Number(process.env.REPLAY_PRELOAD ?? 200_000);
const STATEMENTS = Number(process.env.REPLAY_STATEMENTS ?? 60);
const BATCHES = Number(process.env.REPLAY_BATCHES ?? 5);
const ROUNDS = Number(process.env.REPLAY_ROUNDS ?? 4);
const START_DELAY = Number(process.env.REPLAY_START_DELAY ?? 0);

/** The unresolved indexes: events waiting for their customer, by each hint. */
const UNRESOLVED = ['events_unresolved_anonymous_idx', 'events_unresolved_user_idx', 'events_unresolved_service_customer_idx'];

/** Schema variants: what each changes after the migrations (statements on the scratch database). */
const VARIANTS = {
  'as-migrated': [],
  // The ceiling of any redesign of identity resolution that keeps events out of hint indexes.
  'no-unresolved-indexes': UNRESOLVED.map((name) => `DROP INDEX ${name}`),
  // One partial index over the three hints instead of three (the resolver's lookup is an
  // equality on all three; erasure by a single hint would go through event_identity_hints).
  'one-unresolved-index': [
    ...UNRESOLVED.map((name) => `DROP INDEX ${name}`),
    `CREATE INDEX events_unresolved_hints_idx ON events (project_id, env, anonymous_id, developer_user_id, service_customer_id)
      WHERE customer_id IS NULL AND (anonymous_id IS NOT NULL OR developer_user_id IS NOT NULL OR service_customer_id IS NOT NULL)`,
  ],
  // What events pointing at their hint set would cost at most: one bigint entry per unresolved
  // event (here a hash of the three hints, computed by PostgreSQL, standing in for the set's id).
  'pointer-like-index': [
    ...UNRESOLVED.map((name) => `DROP INDEX ${name}`),
    `CREATE INDEX events_unresolved_set_idx ON events (project_id, env,
       hashtextextended(coalesce(anonymous_id, '') || '|' || coalesce(developer_user_id, '') || '|' || coalesce(service_customer_id, ''), 0))
      WHERE customer_id IS NULL AND (anonymous_id IS NOT NULL OR developer_user_id IS NOT NULL OR service_customer_id IS NOT NULL)`,
  ],
  // Comparisons in the primary key end on its first column (random ids) instead of its fourth.
  'pk-event-id-first': [
    `ALTER TABLE events DROP CONSTRAINT events_pk`,
    `ALTER TABLE events ADD CONSTRAINT events_pk PRIMARY KEY (event_id, client_day, project_id, env)`,
  ],
  // Byte-wise comparison in every index instead of the database's collation.
  'collate-c': [
    `ALTER TABLE events ${['project_id', 'env', 'event_id', 'fingerprint', 'developer_user_id', 'anonymous_id', 'service_customer_id', 'customer_id']
      .map((column) => `ALTER COLUMN ${column} TYPE text COLLATE "C"`)
      .join(', ')}`,
  ],
};

const adminUrl = requireDatabaseAndBuild('npm run bench:pg-insert');
const names = (process.env.REPLAY_VARIANTS ?? Object.keys(VARIANTS).join(',')).split(',').filter(Boolean);
for (const name of names) {
  if (!VARIANTS[name]) {
    process.stderr.write(`bench: unknown variant ${name}; known: ${Object.keys(VARIANTS).join(', ')}\n`);
    process.exit(2);
  }
}
const log = (line = '') => process.stdout.write(`${line}\n`);

/** The real migrations on `url` (the API's own migrate command). */
const migrate = (url) => sh(process.execPath, [path.join(ROOT, 'dist/apps/api/src/migrate.js')], ROOT, { DATABASE_URL: url, LOG_LEVEL: 'warn' });

/** Statements of BATCHES bench batches each, as the API would send them (validated, encoded, merged). */
function statements(count, bodies) {
  const receivedAtMs = Date.now();
  const meta = { projectId: 'proj_replay', env: 'sandbox', appId: 'app_replay', receivedAtMs, sdkName: '@service/web', sdkVersion: '1.6.0' };
  return Array.from({ length: count }, () => {
    const parts = Array.from({ length: BATCHES }, () => encodeBatch(validateEvents(JSON.parse(bodies.next()), receivedAtMs, randomUUID).events, receivedAtMs));
    return insertStatementOf(meta, concatEncodedRows(parts), { firstDelivery: true });
  });
}

async function walBytes(client) {
  const { rows } = await client.query(`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint AS b`);
  return Number(rows[0].b);
}

/** Runs `batch` statements on `variant`'s connection: backend CPU, wall and WAL per 100-event batch. */
async function run(variant, batch) {
  const cpu0 = cpuSeconds(variant.pid);
  const wal0 = await walBytes(variant.client);
  const t0 = performance.now();
  for (const s of batch) await variant.client.query(s.sql, s.params);
  const wallMs = performance.now() - t0;
  const wal1 = await walBytes(variant.client);
  const cpuMs = (cpuSeconds(variant.pid) - cpu0) * 1000;
  const batches = batch.length * BATCHES;
  return { cpuMs: cpuMs / batches, wallMs: wallMs / batches, walKb: (wal1 - wal0) / 1024 / batches };
}

/** Each index of `events` (summed over its partitions): bytes per stored event. */
async function indexSizes(client) {
  const { rows } = await client.query(`
    SELECT i.relname AS name, (SELECT sum(pg_relation_size(t.relid)) FROM pg_partition_tree(i.oid) t)::bigint AS bytes
      FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
     WHERE x.indrelid = 'events'::regclass ORDER BY i.relname`);
  const { rows: count } = await client.query(`SELECT count(*)::bigint AS n FROM events`);
  const events = Number(count[0].n);
  return rows.map((r) => `${r.name} ${(Number(r.bytes) / Math.max(1, events)).toFixed(1)} B`).join(', ');
}

const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;
const fmt = (value, digits = 2) => value.toFixed(digits);

async function main() {
  const bodies = bodySource();
  const variants = [];
  try {
    for (const name of names) {
      const { url, drop } = await createScratchDatabase(adminUrl, `replay_${name.replace(/-/g, '_')}`);
      const variant = { name, drop, rounds: [] };
      variants.push(variant);
      await migrate(url);
      variant.client = new pg.Client({ connectionString: url });
      await variant.client.connect();
      for (const ddl of VARIANTS[name]) await variant.client.query(ddl);
      variant.pid = (await variant.client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      const preloadStatements = Math.ceil(PRELOAD / (BATCHES * EVENTS_PER_BATCH));
      for (let done = 0; done < preloadStatements; done += 20) await run(variant, statements(Math.min(20, preloadStatements - done), bodies));
      await variant.client.query('VACUUM ANALYZE events');
      log(
        `${name}: migrated, ${VARIANTS[name].length} statement(s) of DDL, ${preloadStatements * BATCHES * EVENTS_PER_BATCH} events preloaded; backend pid ${variant.pid}`,
      );
    }
    // One checkpoint before the rounds, so that none of them starts with the preload's dirty buffers to write.
    await variants[0].client.query('CHECKPOINT');
    if (START_DELAY > 0) await new Promise((resolve) => setTimeout(resolve, START_DELAY * 1000));
    log(`${ROUNDS} rounds of ${STATEMENTS} statements x ${BATCHES} batches x ${EVENTS_PER_BATCH} events per variant, one connection each`);
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? variants : [...variants].reverse();
      for (const variant of order) variant.rounds.push(await run(variant, statements(STATEMENTS, bodies)));
    }
    const first = mean(variants[0].rounds.map((r) => r.cpuMs));
    log('PostgreSQL backend per 100-event batch (mean of rounds [each round]):');
    for (const v of variants) {
      const cpu = mean(v.rounds.map((r) => r.cpuMs));
      log(
        `  ${v.name.padEnd(22)} CPU ${fmt(cpu)} ms [${v.rounds.map((r) => fmt(r.cpuMs)).join(', ')}] (${fmt(cpu / first)} of ${variants[0].name}), ` +
          `wall ${fmt(mean(v.rounds.map((r) => r.wallMs)))} ms, WAL ${fmt(mean(v.rounds.map((r) => r.walKb)), 1)} KB`,
      );
    }
    log('Index bytes per stored event:');
    for (const v of variants) log(`  ${v.name.padEnd(22)} ${await indexSizes(v.client)}`);
  } finally {
    for (const v of variants) {
      await v.client?.end().catch(() => {});
      await v.drop();
    }
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  process.exit(1);
});

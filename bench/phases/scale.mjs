// Phase 4 of bench/run.mjs: the scale of data. Ingestion and the public entitlement read with
// BENCH_SCALE_EVENTS events and BENCH_SCALE_CUSTOMERS customers preloaded, against the empty database.
import { sampleActivity, withClient } from '../lib/common.mjs';
import { READ_CONNECTIONS, READ_DURATION, READ_WARMUP, readPhase } from './reads.mjs';
import { saturate } from './ingest.mjs';
import { CONNECTIONS, drive, generatorLine, leastStolen, log, paced, settle, truncate } from '../lib/harness.mjs';

// ---- scale of data --------------------------------------------------------------------------

export const SCALE_EVENTS = Number(process.env.BENCH_SCALE_EVENTS ?? 200_000);
export const SCALE_CUSTOMERS = Number(process.env.BENCH_SCALE_CUSTOMERS ?? 20_000);
/**
 * Seconds of unmeasured ingestion between the run right after the preload's CHECKPOINT and
 * the goal's run. After a checkpoint the first change to each leaf of the primary key writes
 * a full-page image; with random ids into a large index that is most of every batch's WAL
 * until nearly every leaf has been touched once, a burst that production sees once per
 * checkpoint interval, not all the time. Both runs are printed; the goal compares the second
 * with the empty table, which has no such burst (docs/decisions/benchmark-method.md).
 */
export const SCALE_WARMUP = Number(process.env.BENCH_SCALE_WARMUP ?? 45);

/** The server settings that decide how often checkpoints come, what a full-page image costs and how shared memory is mapped. */
export function walSettings(url) {
  return withClient(url, async (client) => {
    const { rows } = await client.query(
      `SELECT name, setting, unit FROM pg_settings
        WHERE name IN ('shared_buffers', 'max_wal_size', 'checkpoint_timeout', 'wal_compression', 'huge_pages') ORDER BY name`,
    );
    return rows.map((r) => `${r.name}=${r.setting}${r.unit ? ` ${r.unit}` : ''}`).join(', ');
  });
}

/** Preloads SCALE_EVENTS events (today's partition, 64 devices' worth of hints) and SCALE_CUSTOMERS customers with two aliases each. */
export async function preload(api) {
  const started = Date.now();
  await withClient(api.dbUrl, async (client) => {
    const chunk = 500_000;
    for (let from = 0; from < SCALE_CUSTOMERS; from += chunk) {
      const to = Math.min(SCALE_CUSTOMERS, from + chunk) - 1;
      await client.query(
        `INSERT INTO customers (id, project_id, env, created_at, updated_at)
         SELECT 'cdcust_pre' || g, $1, 'sandbox', now(), now() FROM generate_series($2::int, $3::int) g`,
        [api.project.id, from, to],
      );
      await client.query(
        `INSERT INTO customer_aliases (project_id, env, type, value, customer_id, created_at)
         SELECT $1, 'sandbox', t.type, t.prefix || g, 'cdcust_pre' || g, now()
           FROM generate_series($2::int, $3::int) g, (VALUES ('developer', 'pre_user_'), ('anonymous', 'pre_anon_')) t(type, prefix)`,
        [api.project.id, from, to],
      );
    }
    for (let from = 0; from < SCALE_EVENTS; from += chunk) {
      const to = Math.min(SCALE_EVENTS, from + chunk) - 1;
      await client.query(
        `INSERT INTO events (project_id, env, event_id, client_day, app_id, name, timestamp_ms, client_timestamp_ms, received_at_ms,
                             level, fingerprint, properties, tags, category_tags, anonymous_id, customer_id)
         SELECT $1, 'sandbox', md5('pre_' || g)::uuid::text, (now() AT TIME ZONE 'utc')::date, $4, 'page.viewed', $5::bigint - g, $5::bigint - g, $5::bigint,
                CASE WHEN g % 10 = 7 THEN 'error' END, CASE WHEN g % 10 = 7 THEN lpad(to_hex(g % 24 + 439041024), 8, '0') END,
                jsonb_build_object('path', '/pricing', 'title', 'Example shop', 'durationMs', g % 5000), '{"release":"2026.11.3","locale":"en-US"}'::jsonb, '["web"]'::jsonb,
                'pre_anon_' || (g % $6::int), CASE WHEN g % 3 = 0 THEN 'cdcust_pre' || (g % $6::int) END
           FROM generate_series($2::int, $3::int) g`,
        [api.project.id, from, to, 'app_preloaded', Date.now(), Math.max(1, SCALE_CUSTOMERS)],
      );
    }
    await client.query('VACUUM ANALYZE events');
    await client.query('ANALYZE customers');
    await client.query('ANALYZE customer_aliases');
    await client.query('CHECKPOINT');
  });
  log(`  preloaded ${SCALE_EVENTS} events and ${SCALE_CUSTOMERS} customers in ${Math.round((Date.now() - started) / 1000)} s`);
}

/** Phase 4, after phase 3 (whose results give the entitlement read's saturation when it ran). */
export async function scalePhase({ api, bare, routes, readResults, servers }) {
  log('');
  log(`4. Scale of data: ${SCALE_EVENTS} events and ${SCALE_CUSTOMERS} customers preloaded into the API's database:`);
  // The read is compared at half the API's own closed-loop saturation of it (phase 3), the
  // same rate before and after the preload: at a rate near saturation both p99s would
  // measure queueing, not the data.
  const entRoute = routes[0];
  const entSaturation = readResults.find((r) => r.name === entRoute.name) ?? (await readPhase(entRoute, api, bare));
  const scaleReadRate = Math.max(1, Math.round(entSaturation.api.rps * 0.5));
  // Both reads get phase 3's warm-up first: the one with data comes after minutes without a
  // read (preload, ingestion), and on a slower bench machine the API was still
  // catching up when its window began (docs/performance.md); the empty read follows phase 3.
  const readAtRate = async () => {
    if (READ_WARMUP > 0) await drive({ url: api.base, headers: entRoute.headers, connections: READ_CONNECTIONS, duration: READ_WARMUP, next: entRoute.next });
    return paced({
      url: api.base,
      headers: entRoute.headers,
      connections: READ_CONNECTIONS,
      duration: READ_DURATION,
      rate: scaleReadRate,
      next: entRoute.next,
      perRequest: 1,
    });
  };
  await truncate(api.dbUrl);
  await settle(api.dbUrl);
  const emptyScaleRead = await leastStolen(`${entRoute.name} before the preload`, readAtRate);
  await preload(api);
  log(`  server settings: ${await walSettings(api.dbUrl)}`);
  const apiServer = servers[0];
  log("  right after the preload's checkpoint:");
  const afterCheckpointIngest = await saturate(apiServer, { keepData: true });
  if (SCALE_WARMUP > 0) {
    log(`  ${SCALE_WARMUP} s of unmeasured ingestion, then the goal's run:`);
    await drive({ url: apiServer.url, headers: apiServer.headers, connections: CONNECTIONS, duration: SCALE_WARMUP, bodies: apiServer.bodies });
  }
  const scaledIngest = await leastStolen('api saturation with the data', () => saturate(apiServer, { keepData: true }));
  await settle(api.dbUrl);
  const activity = await sampleActivity(api.dbUrl);
  const scaledRead = await leastStolen(`${entRoute.name} with the data`, readAtRate);
  const competing = await activity.stop();
  log(
    `  ${entRoute.name} at ${scaleReadRate} req/s (half the API's saturation): p50 ${scaledRead.p50} ms, p99 ${scaledRead.p99} ms (${generatorLine(scaledRead)}); before the preload p50 ${emptyScaleRead.p50} ms, p99 ${emptyScaleRead.p99} ms (${generatorLine(emptyScaleRead)})`,
  );
  // What else held a backend of the API's database while the read was measured (the read's
  // own statements are the entitlement lookups): background jobs, autovacuum, the rollups.
  log(`  active in the database during the read with the data (${competing.samples} samples of pg_stat_activity, 25 ms apart), busiest first:`);
  for (const [statement, count] of competing.top.slice(0, 8)) log(`    ${String(count).padStart(5)}  ${statement}`);
  return { scaledIngest, afterCheckpointIngest, scaledRead, emptyScaleRead, scaleReadRate };
}

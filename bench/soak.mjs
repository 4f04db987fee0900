// Mixed-traffic soak: the compiled API (npm run build first) on a throw-away database
// of DATABASE_URL's server and REDIS_URL, under closed-loop traffic mixing event batches,
// identify, entitlement reads and manual grants for a duration, sampling the API process's RSS
// and heap (from its METRICS_PORT) at start, every interval, and at the end. Memory should be
// flat: the script prints the figures and fails when the end RSS is more than --max-growth
// (default 25 %) above the RSS after warm-up, or when any request failed with a 5xx or hung.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379 \
//     node bench/soak.mjs [--duration 10m] [--workers 6] [--sample 30s] [--warmup 30s]
//
// Figures of a 10-minute run are in docs/performance.md ("Soak").
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createScratchDatabase } from './lib/common.mjs';
import { ORIGIN, cleanup, log, migrate, onCleanup, operator, preflight, request, sample, scrape, sleep, startApi } from './faults/lib.mjs';

function durationMs(text) {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(String(text));
  if (!match) throw new Error(`not a duration: ${text} (e.g. 10m, 90s)`);
  return Number(match[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match[2] ?? 's'];
}

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '10m' },
    workers: { type: 'string', default: '6' },
    sample: { type: 'string', default: '30s' },
    warmup: { type: 'string', default: '30s' },
    'max-growth': { type: 'string', default: '25' },
  },
});
const DURATION_MS = durationMs(args.duration);
const WARMUP_MS = Math.min(durationMs(args.warmup), DURATION_MS / 4);
const SAMPLE_MS = durationMs(args.sample);
const WORKERS = Number(args.workers);
const MAX_GROWTH = Number(args['max-growth']) / 100;

const adminUrl = process.env.DATABASE_URL;
if (!adminUrl || !process.env.REDIS_URL) {
  process.stderr.write('soak: needs DATABASE_URL (a PostgreSQL server; a throw-away database is created on it) and REDIS_URL\n');
  process.exit(2);
}

const mib = (bytes) => Math.round((bytes / 1024 / 1024) * 10) / 10;

async function memory(metricsPort) {
  const body = await scrape(metricsPort);
  return {
    rssMiB: mib(sample(body, 'process_resident_memory_bytes')),
    heapUsedMiB: mib(sample(body, 'nodejs_heap_size_used_bytes')),
    externalMiB: mib(sample(body, 'nodejs_external_memory_bytes')),
  };
}

async function main() {
  preflight();
  const { url: databaseUrl, drop } = await createScratchDatabase(adminUrl, 'soak');
  onCleanup(drop);
  await migrate(databaseUrl);
  const api = await startApi({
    DATABASE_URL: databaseUrl,
    REDIS_URL: process.env.REDIS_URL,
    NODE_ENV: 'production',
    SHUTDOWN_DELAY_MS: '0',
    // Production refuses a weak signing key (the operator token is generated per run too) and
    // wants its public address beside the operator API (the OAuth issuer).
    WEBHOOK_SIGNING_KEY: randomBytes(36).toString('base64'),
    PUBLIC_BASE_URL: 'http://127.0.0.1',
  });
  onCleanup(() => api.child.kill('SIGTERM'));

  const { id: projectId } = await operator(api.port, 'POST', '/projects', { name: 'Soak' });
  const unlimited = { sustained: 1_000_000, burst: 1_000_000 };
  await operator(api.port, 'PUT', `/projects/${projectId}/rate-limits`, { events: unlimited, entitlements: unlimited, alias: unlimited });
  const app = await operator(api.port, 'POST', `/projects/${projectId}/apps`, { name: 'Web', platform: 'web', allowedOrigins: [ORIGIN] });
  const key = (kind) => app.keys.find((k) => k.kind === kind && k.env === 'sandbox').key;
  const pub = { Authorization: `Bearer ${key('publishable')}`, Origin: ORIGIN };
  const sk = { Authorization: `Bearer ${key('secret')}` };

  const customers = [];
  let seq = 0;
  const counts = {};
  const failures = [];
  let maxMs = 0;
  const record = (kind, res) => {
    const bucket = (counts[kind] ??= {});
    bucket[res.status] = (bucket[res.status] ?? 0) + 1;
    maxMs = Math.max(maxMs, res.ms ?? 0);
    if (res.status === 0 || res.status >= 500) failures.push({ kind, status: res.status, body: res.text?.slice(0, 200) });
  };

  // One step of a client: 45 % a 20-event batch, 20 % identify (new or returning user),
  // 25 % an entitlement read, 10 % a manual grant.
  const step = async () => {
    const n = (seq += 1);
    const roll = Math.random();
    if (roll < 0.45) {
      const events = Array.from({ length: 20 }, (_, i) => ({
        name: i % 5 === 0 ? 'error.thrown' : 'page.viewed',
        eventId: `evt_soak_${n}_${i}`,
        anonymousId: `anon_soak_${n % 500}`,
        properties: { path: `/p/${i}`, n },
        tags: { build: 'soak' },
      }));
      record('events', await request(api.port, 'POST', '/v1/events', { headers: pub, body: { events } }));
    } else if (roll < 0.65 || customers.length === 0) {
      const user = n % 3 === 0 && customers.length ? n % customers.length : n;
      const res = await request(api.port, 'POST', '/v1/identify', { headers: pub, body: { userId: `soak_user_${user}`, anonymousId: `anon_soak_${n % 500}` } });
      record('identify', res);
      if (res.status === 200 && customers.length < 5000) customers.push(res.body.serviceCustomerId);
    } else if (roll < 0.9) {
      const customerId = customers[n % customers.length];
      record('read', await request(api.port, 'GET', `/v1/server/customers/${customerId}/entitlements`, { headers: sk }));
    } else {
      const customerId = customers[n % customers.length];
      record(
        'grant',
        await request(api.port, 'POST', `/v1/server/customers/${customerId}/grant`, {
          headers: sk,
          body: { entitlementKey: `soak_key_${n % 7}`, duration: 'P30D', reason: 'Soak test grant, mixed traffic run' },
        }),
      );
    }
  };

  const startedAt = Date.now();
  const samples = [{ atS: 0, ...(await memory(api.metricsPort)) }];
  log(`soak: API on ${api.port} (metrics ${api.metricsPort}), ${WORKERS} clients for ${DURATION_MS / 1000} s; start ${JSON.stringify(samples[0])}`);
  let stop = false;
  const clients = Array.from({ length: WORKERS }, async () => {
    while (!stop) await step().catch((err) => failures.push({ kind: 'client', error: String(err?.message ?? err) }));
  });
  let afterWarmup;
  const sampler = (async () => {
    while (!stop) {
      const left = startedAt + DURATION_MS - Date.now();
      if (left <= 0) break;
      await sleep(Math.min(SAMPLE_MS, left));
      if (stop || Date.now() >= startedAt + DURATION_MS) break;
      const s = { atS: Math.round((Date.now() - startedAt) / 1000), ...(await memory(api.metricsPort)) };
      samples.push(s);
      if (!afterWarmup && Date.now() - startedAt >= WARMUP_MS) afterWarmup = s;
      const done = Object.values(counts).reduce((sum, c) => sum + Object.values(c).reduce((a, b) => a + b, 0), 0);
      log(`  +${s.atS}s rss ${s.rssMiB} MiB, heap ${s.heapUsedMiB} MiB, ${done} requests`);
    }
  })();
  await sleep(DURATION_MS);
  stop = true;
  await Promise.all([...clients, sampler]);
  const end = { atS: Math.round((Date.now() - startedAt) / 1000), ...(await memory(api.metricsPort)) };
  samples.push(end);
  const total = Object.values(counts).reduce((sum, c) => sum + Object.values(c).reduce((a, b) => a + b, 0), 0);
  const base = afterWarmup ?? samples[0];
  const growth = (end.rssMiB - base.rssMiB) / base.rssMiB;
  const summary = {
    durationS: end.atS,
    workers: WORKERS,
    requests: total,
    perSecond: Math.round(total / end.atS),
    byKind: counts,
    maxMs: Math.round(maxMs),
    rssStartMiB: samples[0].rssMiB,
    rssAfterWarmupMiB: base.rssMiB,
    rssEndMiB: end.rssMiB,
    rssMaxMiB: Math.max(...samples.map((s) => s.rssMiB)),
    heapUsedAfterWarmupMiB: base.heapUsedMiB,
    heapUsedEndMiB: end.heapUsedMiB,
    rssGrowthAfterWarmupPct: Math.round(growth * 1000) / 10,
    failures: failures.length,
  };
  log(`soak summary ${JSON.stringify(summary)}`);
  if (failures.length) log(`  first failures: ${JSON.stringify(failures.slice(0, 3))}`);
  const ok = failures.length === 0 && growth <= MAX_GROWTH;
  log(ok ? 'soak: passed' : `soak: FAILED (${failures.length} failures, RSS growth ${summary.rssGrowthAfterWarmupPct} % > ${MAX_GROWTH * 100} %?)`);
  return ok;
}

main()
  .catch((err) => {
    log(String(err?.stack ?? err));
    return false;
  })
  .then(async (ok) => {
    await cleanup();
    process.exit(ok ? 0 : 1);
  });

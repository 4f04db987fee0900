// What each request leaves for V8's old generation, per route (docs/performance.md, "What
// the measurements showed"), a phase script beside bench/run.mjs:
//
//   npm run build && DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/promotion.mjs
//
// Starts the compiled API under --trace-gc-nvp on a fresh scratch database on the DATABASE_URL
// server (dropped afterwards), mints a web app and seeds BENCH_PROMOTION_USERS identified users
// with grants as bench/run.mjs's read phase does (bench/lib/read-routes.mjs), then runs a closed loop per route and divides the scavenges' bytes by the
// requests of the window (its first second left out):
//
//   allocated/req  what a request allocates in the young generation
//   promoted/req   what survives two scavenges: objects that outlive their request and wait for
//                  a full collection (the cause of the read tail's clusters)
//   API CPU/req    the API process's CPU time (user + system, /proc) over the same window
//
// Routes: bench/run.mjs's four reads (public and server entitlements, identify with a known
// pair, resolve) and a 400 from the validation pipe (no statement). Environment: DATABASE_URL (required),
// BENCH_PROMOTION_SECONDS (8 per route), BENCH_PROMOTION_CONNECTIONS (16), BENCH_PROMOTION_USERS
// (200), BENCH_PROMOTION_ROUTES (indexes 0-4 in the order above, e.g. "0,4"; all), LOG_LEVEL (warn); the API runs with start:prod's node flags and BENCH_API_NODE_ARGS
// (BENCH_API_PLAIN_NODE=1 leaves start:prod's out).
import { randomBytes } from 'node:crypto';
import {
  API_ENTRY,
  createScratchDatabase,
  apiEnv,
  apiNodeArgs,
  cpuSeconds,
  freePort,
  killChildren,
  requireDatabaseAndBuild,
  startNode,
  stop,
  waitForHttp,
} from './lib/common.mjs';
import { ORIGIN, closedLoop, mintWebApp, readRoutes, seedReaders, selectRoutes } from './lib/read-routes.mjs';

const adminUrl = requireDatabaseAndBuild('node bench/promotion.mjs');
const SECONDS = Number(process.env.BENCH_PROMOTION_SECONDS ?? 8);
const CONNECTIONS = Number(process.env.BENCH_PROMOTION_CONNECTIONS ?? 16);
const USERS = Number(process.env.BENCH_PROMOTION_USERS ?? 200);
const log = (line = '') => process.stdout.write(`${line}\n`);

/** `--trace-gc-nvp` lines of the API: the collector (s = scavenge), its time since the API's start, and its counters. */
function collectGcLines(child, startedAt) {
  const collections = [];
  let pending = '';
  child.stdout.on('data', (chunk) => {
    pending += chunk;
    let end;
    while ((end = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 1);
      const head = line.match(/\s(\d+) ms: pause=[\d.]+ .*\bgc=(\w+)/);
      if (!head) continue;
      const counters = Object.fromEntries([...line.matchAll(/(\w[\w.]*)=([\d.]+)/g)].map(([, key, value]) => [key, Number(value)]));
      collections.push({ at: startedAt + Number(head[1]), kind: head[2], ...counters });
    }
  });
  return collections;
}

async function main() {
  const db = await createScratchDatabase(adminUrl, 'promotion');
  const operatorToken = `op_bench_${randomBytes(16).toString('hex')}`;
  const port = await freePort();
  const startedAt = Date.now();
  const nodeArgs = `${apiNodeArgs()} --trace-gc-nvp`;
  const server = startNode('api', API_ENTRY, { ...apiEnv(db.url, port, operatorToken), METRICS_PORT: '0' }, nodeArgs);
  const collections = collectGcLines(server.child, startedAt);
  try {
    const base = `http://127.0.0.1:${port}`;
    await waitForHttp(server, `${base}/v1/healthz`);
    const api = { base, ...(await mintWebApp(base, operatorToken, 'bench promotion', { withSecret: true })) };
    const users = await seedReaders(api, USERS);
    const routes = selectRoutes(
      [
        ...readRoutes(api, users),
        {
          name: 'GET /v1/entitlements (400, no userId)',
          headers: { authorization: `Bearer ${api.publishable}`, origin: ORIGIN },
          next: () => ({ method: 'GET', path: '/v1/entitlements' }),
        },
      ],
      process.env.BENCH_PROMOTION_ROUTES,
    );
    log(`bench: API with ${nodeArgs}, ${CONNECTIONS} connections, ${SECONDS} s per route, LOG_LEVEL=${process.env.LOG_LEVEL ?? 'warn'}`);
    for (const route of routes) {
      const from = Date.now() + 1000;
      let cpuFrom = null;
      const atFrom = setTimeout(() => (cpuFrom = cpuSeconds(server.child.pid)), 1000);
      const { done: sent, statuses } = await closedLoop(port, route, { connections: CONNECTIONS, ms: SECONDS * 1000 });
      const to = Date.now();
      clearTimeout(atFrom);
      const cpuTo = cpuSeconds(server.child.pid);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const scavenges = collections.filter((c) => c.kind === 's' && c.at >= from && c.at <= to);
      const requests = (sent * (to - from)) / (SECONDS * 1000);
      const perRequest = (field) => scavenges.reduce((sum, c) => sum + (c[field] ?? 0), 0) / requests;
      const fullCollections = collections.filter((c) => c.kind !== 's' && c.at >= from && c.at <= to).length;
      const cpuPerRequest = cpuFrom === null || cpuTo === null ? 'n/a' : `${(((cpuTo - cpuFrom) * 1000) / requests).toFixed(3)} ms`;
      log(
        `  ${route.name.padEnd(38)} ${Math.round(sent / SECONDS)} req/s, API CPU/req ${cpuPerRequest}, allocated/req ${(perRequest('allocated') / 1024).toFixed(1)} KB, ` +
          `promoted/req ${Math.round(perRequest('promoted'))} B (${scavenges.length} scavenges, ${fullCollections} full collections) ${JSON.stringify(statuses)}`,
      );
    }
  } finally {
    await stop(server);
    await db.drop();
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  killChildren();
  process.exit(1);
});

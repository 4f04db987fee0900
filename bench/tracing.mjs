// What tracing costs, a standalone bench script beside bench/run.mjs:
//
//   npm run build && DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/tracing.mjs
//
// The same request mix (bench/lib/read-routes.mjs's four reads: public and server entitlements,
// identify with a known pair, resolve; BENCH_TRACING_SECONDS each, BENCH_TRACING_CONNECTIONS at
// a time) against the compiled API started three ways on one scratch database:
//
//   bare   start:prod's node flags without the tracing preload (`--import …/tracing.js` left out)
//   off    start:prod as shipped: the preload loaded, OTEL_EXPORTER_OTLP_ENDPOINT unset
//   on     start:prod with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a local OTLP stand-in (an HTTP
//          server answering POST /v1/traces), every request traced and exported
//
// Measure: the API process's CPU time (user + system, /proc) per request over the mix. CPU per
// request, not throughput, because the bench shares its cores with PostgreSQL and the load
// generator. bare and off run BENCH_TRACING_ROUNDS times each, alternated (bare, off, on, bare,
// off, …) so that a drift of the machine falls on both; the figure of each is its median.
//
// Goal line (tracing off costs no more than a few percent): off / bare ≤ 1.05.
// The on / bare ratio and the spans received are printed as information.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import {
  API_ENTRY,
  ROOT,
  apiEnv,
  apiNodeArgs,
  cpuSeconds,
  createScratchDatabase,
  freePort,
  killChildren,
  requireDatabaseAndBuild,
  startNode,
  stop,
  waitForHttp,
} from './lib/common.mjs';
import { closedLoop, mintWebApp, readRoutes, seedReaders } from './lib/read-routes.mjs';

const adminUrl = requireDatabaseAndBuild('node bench/tracing.mjs');
const SECONDS = Number(process.env.BENCH_TRACING_SECONDS ?? 4);
const CONNECTIONS = Number(process.env.BENCH_TRACING_CONNECTIONS ?? 8);
const ROUNDS = Number(process.env.BENCH_TRACING_ROUNDS ?? 2);
const USERS = Number(process.env.BENCH_TRACING_USERS ?? 100);
const GOAL_OFF = 1.05;
const log = (line = '') => process.stdout.write(`${line}\n`);

/** The tracing preload's flag, as package.json's start:prod writes it. */
const PRELOAD = '--import ./dist/apps/api/src/tracing.js';
const startProd = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts['start:prod'];
if (!startProd.includes(PRELOAD)) throw new Error(`start:prod has no tracing preload (${startProd})`);
// apiNodeArgs() holds start:prod's flags (the preload among them) and BENCH_API_NODE_ARGS.
const bareArgs = apiNodeArgs()
  .replace(`--import ${path.join(ROOT, 'dist/apps/api/src/tracing.js')}`, ' ')
  .replace(/\s+/g, ' ')
  .trim();
const preloadArgs = `${bareArgs} ${PRELOAD}`;

/** A local OTLP/HTTP receiver: accepts POST /v1/traces, counts requests and bytes. */
async function startCollector() {
  const received = { requests: 0, bytes: 0 };
  const server = createServer((req, res) => {
    let bytes = 0;
    req.on('data', (c) => (bytes += c.length));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') {
        received.requests++;
        received.bytes += bytes;
      }
      res.writeHead(200, { 'content-type': req.headers['content-type'] ?? 'application/x-protobuf' });
      res.end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, received, close: () => new Promise((r) => server.close(r)) };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function main() {
  const db = await createScratchDatabase(adminUrl, 'tracing');
  const collector = await startCollector();
  const operatorToken = `op_bench_${randomBytes(16).toString('hex')}`;
  const configs = {
    bare: { args: bareArgs, env: {} },
    off: { args: preloadArgs, env: {} },
    on: { args: preloadArgs, env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SERVICE_NAME: 'bench-tracing' } },
  };
  const results = { bare: [], off: [], on: [] };
  let users = null;
  let api = null;
  try {
    const order = [];
    for (let round = 0; round < ROUNDS; round++) order.push('bare', 'off', ...(round === 0 ? ['on'] : []));
    log(`bench: tracing cost, ${CONNECTIONS} connections, ${SECONDS} s per route, order ${order.join(' ')}`);
    for (const name of order) {
      const config = configs[name];
      const port = await freePort();
      const env = { ...apiEnv(db.url, port, operatorToken), METRICS_PORT: '0', SEED_DEMO: 'false', ...config.env };
      for (const key of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']) if (!(key in config.env)) env[key] = '';
      const server = startNode(`api-${name}`, API_ENTRY, env, config.args);
      try {
        const base = `http://127.0.0.1:${port}`;
        await waitForHttp(server, `${base}/v1/healthz`, 120_000);
        if (!users) {
          api = { base, ...(await mintWebApp(base, operatorToken, 'bench tracing', { withSecret: true })) };
          users = await seedReaders(api, USERS);
        }
        const routes = readRoutes({ ...api, base }, users);
        await closedLoop(port, routes[0], { connections: CONNECTIONS, ms: 1500 }); // warm-up
        const cpuFrom = cpuSeconds(server.child.pid);
        let requests = 0;
        const statuses = {};
        for (const route of routes) {
          const run = await closedLoop(port, route, { connections: CONNECTIONS, ms: SECONDS * 1000 });
          requests += run.done;
          for (const [status, n] of Object.entries(run.statuses)) statuses[status] = (statuses[status] ?? 0) + n;
        }
        const cpuTo = cpuSeconds(server.child.pid);
        const perRequestMs = ((cpuTo - cpuFrom) * 1000) / requests;
        results[name].push(perRequestMs);
        log(
          `  ${name.padEnd(4)} ${Math.round(requests / (SECONDS * routes.length))} req/s, API CPU/req ${perRequestMs.toFixed(3)} ms ${JSON.stringify(statuses)}`,
        );
        if (Object.keys(statuses).some((s) => s !== '200')) throw new Error(`${name}: a request of the mix did not answer 200: ${JSON.stringify(statuses)}`);
      } finally {
        await stop(server);
      }
    }
    const bare = median(results.bare);
    const off = median(results.off);
    const on = median(results.on);
    const offRatio = off / bare;
    log(
      `${offRatio <= GOAL_OFF ? 'ok' : 'MISS'}   tracing off costs nothing measurable: API CPU/req with the preload and no endpoint ${off.toFixed(3)} ms / without the preload ${bare.toFixed(3)} ms = ${offRatio.toFixed(3)} (goal ≤ ${GOAL_OFF})`,
    );
    log(
      `info tracing on (OTLP export of every request): API CPU/req ${on.toFixed(3)} ms = ${(on / bare).toFixed(2)} × without; the stand-in received ${collector.received.requests} exports, ${Math.round(collector.received.bytes / 1024)} KB`,
    );
    if (collector.received.requests === 0) throw new Error('tracing on exported nothing to the OTLP stand-in');
  } finally {
    await collector.close();
    await db.drop();
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  killChildren();
  process.exit(1);
});

// CPU per request of this build's API against another build's, on the read routes, in short
// alternating bursts (docs/performance.md, "Other benches"):
//
//   npm run build && DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
//     BENCH_AB_OTHER=/tmp/base npm run bench:ab
//
// BENCH_AB_OTHER is another checkout with its own `npm run build` done (e.g. `git worktree add
// /tmp/base <commit>` with node_modules linked). On a shared machine the CPU a request costs
// drifts by a third within minutes, more than a change of a few per cent; runs one after the
// other cannot tell such a change from the drift. Here both APIs run at once on one scratch
// database (this build migrates it; keys and seeded users are shared), and each route is
// measured in BENCH_AB_BURSTS pairs of closed-loop bursts, this build and the other in turn
// (which goes first alternates). A burst's figure is the API process's CPU time (/proc, user +
// system) over its requests. Printed per route: the median of each build and the median of
// the pairs' ratios (this / other) with its interquartile range; a ratio below 1 means this
// build spends less CPU per request.
//
// Environment: DATABASE_URL (required), BENCH_AB_OTHER (required), BENCH_AB_ROUTES (indexes of
// bench/lib/read-routes.mjs's routes, "0,1,3"; identify runs into its alias bucket within
// seconds), BENCH_AB_BURSTS (15), BENCH_AB_BURST_MS (1500), BENCH_AB_CONNECTIONS (16),
// BENCH_AB_USERS (200), LOG_LEVEL (warn). Both APIs run with start:prod's node flags.
import path from 'node:path';
import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import {
  API_ENTRY,
  ROOT,
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
import { closedLoop, mintWebApp, readRoutes, seedReaders, selectRoutes } from './lib/read-routes.mjs';

const adminUrl = requireDatabaseAndBuild('node bench/ab-reads.mjs');
const OTHER = process.env.BENCH_AB_OTHER ? path.resolve(process.env.BENCH_AB_OTHER) : undefined;
const OTHER_ENTRY = OTHER && path.join(OTHER, path.relative(ROOT, API_ENTRY));
if (!OTHER_ENTRY || !existsSync(OTHER_ENTRY)) {
  process.stderr.write(`BENCH_AB_OTHER must name a checkout with a build (${OTHER_ENTRY ?? 'unset'} not found)\n`);
  process.exit(2);
}
const BURSTS = Number(process.env.BENCH_AB_BURSTS ?? 15);
const BURST_MS = Number(process.env.BENCH_AB_BURST_MS ?? 1500);
const CONNECTIONS = Number(process.env.BENCH_AB_CONNECTIONS ?? 16);
const USERS = Number(process.env.BENCH_AB_USERS ?? 200);
const log = (line = '') => process.stdout.write(`${line}\n`);

/** CPU milliseconds per request of `server` over one burst. */
async function measured(server, port, route) {
  const before = cpuSeconds(server.child.pid);
  const { done, statuses } = await closedLoop(port, route, { connections: CONNECTIONS, ms: BURST_MS });
  const after = cpuSeconds(server.child.pid);
  return { msPerRequest: ((after - before) * 1000) / done, statuses };
}

const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  return sorted[low] + (sorted[Math.min(low + 1, sorted.length - 1)] - sorted[low]) * (at - low);
};

async function main() {
  const db = await createScratchDatabase(adminUrl, 'ab');
  const operatorToken = `op_bench_${randomBytes(16).toString('hex')}`;
  const servers = [];
  try {
    for (const [name, entry, cwd] of [
      ['this', API_ENTRY, ROOT],
      ['other', OTHER_ENTRY, OTHER],
    ]) {
      const port = await freePort();
      const server = startNode(name, entry, { ...apiEnv(db.url, port, operatorToken), METRICS_PORT: '0' }, apiNodeArgs(), cwd);
      await waitForHttp(server, `http://127.0.0.1:${port}/v1/healthz`);
      servers.push({ name, port, server });
    }
    const base = `http://127.0.0.1:${servers[0].port}`;
    const api = { base, ...(await mintWebApp(base, operatorToken, 'bench a/b', { withSecret: true })) };
    const users = await seedReaders(api, USERS);
    const routes = selectRoutes(readRoutes(api, users), process.env.BENCH_AB_ROUTES ?? '0,1,3');
    log(`bench: this build ${ROOT} against ${OTHER}; ${BURSTS} pairs of ${BURST_MS} ms bursts per route, ${CONNECTIONS} connections`);
    for (const route of routes) {
      for (const { port } of servers) await closedLoop(port, route, { connections: CONNECTIONS, ms: 2000 });
      const mine = [];
      const theirs = [];
      const ratios = [];
      const statuses = {};
      for (let pair = 0; pair < BURSTS; pair++) {
        const order = pair % 2 === 0 ? servers : [...servers].reverse();
        const figures = {};
        for (const { name, server, port } of order) {
          const result = await measured(server, port, route);
          figures[name] = result.msPerRequest;
          for (const [status, count] of Object.entries(result.statuses)) statuses[status] = (statuses[status] ?? 0) + count;
        }
        mine.push(figures.this);
        theirs.push(figures.other);
        ratios.push(figures.this / figures.other);
      }
      log(
        `  ${route.name.padEnd(34)} this ${quantile(mine, 0.5).toFixed(3)} ms, other ${quantile(theirs, 0.5).toFixed(3)} ms CPU/req; ` +
          `ratio ${quantile(ratios, 0.5).toFixed(3)} (IQR ${quantile(ratios, 0.25).toFixed(3)} - ${quantile(ratios, 0.75).toFixed(3)}) ${JSON.stringify(statuses)}`,
      );
    }
  } finally {
    for (const { server } of servers) await stop(server);
    await db.drop();
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  killChildren();
  process.exit(1);
});

// CPU profiles of the built API on the hot reads (docs/performance.md, "Other benches"):
//
//   npm run build && DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/profile-reads.mjs
//
// Mints a web app and seeds BENCH_PROFILE_USERS identified users on a scratch database (dropped
// afterwards), then for each route starts the API of its own under `--cpu-prof` (start:prod's
// node flags too), drives a closed loop (bench/lib/read-routes.mjs) for BENCH_PROFILE_SECONDS
// after a warm-up, and stops it. Each profile is read for the loaded window only (its samples
// after the warm-up, up to the stop): the share of the API's CPU by layer (pg, Nest, Fastify,
// validation, the service's own code, Node's core, the garbage collector), the top frames by
// self time and by inclusive time outside pg, and the API CPU per request (/proc). A summary per
// route is printed and written as Markdown to BENCH_PROFILE_OUT (a directory; unset: printed
// only), with a trimmed .cpuprofile (the loaded window's samples) beside it when
// BENCH_PROFILE_KEEP=1.
//
// Environment: DATABASE_URL (required), BENCH_PROFILE_ROUTES (indexes of the read routes,
// "0,1,3"), BENCH_PROFILE_SECONDS (10), BENCH_PROFILE_WARMUP (3), BENCH_PROFILE_CONNECTIONS
// (16), BENCH_PROFILE_USERS (200), BENCH_PROFILE_OUT, BENCH_PROFILE_KEEP, BENCH_PROFILE_TOP
// (25), BENCH_PROFILE_LABEL (a name for the build in the summaries), LOG_LEVEL (warn).
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
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
import { closedLoop, mintWebApp, readRoutes, seedReaders, selectRoutes } from './lib/read-routes.mjs';

const adminUrl = requireDatabaseAndBuild('node bench/profile-reads.mjs');
const SECONDS = Number(process.env.BENCH_PROFILE_SECONDS ?? 10);
const WARMUP = Number(process.env.BENCH_PROFILE_WARMUP ?? 3);
const CONNECTIONS = Number(process.env.BENCH_PROFILE_CONNECTIONS ?? 16);
const USERS = Number(process.env.BENCH_PROFILE_USERS ?? 200);
const TOP = Number(process.env.BENCH_PROFILE_TOP ?? 25);
const OUT = process.env.BENCH_PROFILE_OUT ? path.resolve(process.env.BENCH_PROFILE_OUT) : undefined;
const LABEL = process.env.BENCH_PROFILE_LABEL ?? path.basename(ROOT);
const log = (line = '') => process.stdout.write(`${line}\n`);

/** The layer a frame's script belongs to. */
export function layerOf(url, functionName) {
  if (!url) {
    if (functionName === '(garbage collector)') return 'gc';
    if (functionName === '(idle)') return 'idle';
    if (functionName === '(program)') return 'program (V8, native)';
    return 'native';
  }
  if (url.startsWith('node:')) return 'node core';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + '/node_modules/'.length).split('/');
    const name = rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
    if (name === 'pg' || name.startsWith('pg-') || name === 'postgres-array' || name === 'postgres-date') return 'pg';
    if (name.startsWith('@nestjs/')) return name;
    if (name === 'fastify' || name.startsWith('@fastify/') || name === 'find-my-way' || name === 'avvio' || name === 'light-my-request') return 'fastify';
    if (name === 'class-validator' || name === 'class-transformer' || name === 'validator') return 'class-validator/transformer';
    if (name.startsWith('@opentelemetry/')) return 'opentelemetry';
    return name;
  }
  const dist = url.indexOf('/dist/');
  if (dist >= 0) {
    const rest = url.slice(dist + '/dist/'.length).split('/');
    return rest[0] === 'libs' ? `service: ${rest[1]}` : `service: ${rest.slice(0, 2).join('/')}`;
  }
  return 'other';
}

const shortUrl = (url) => {
  if (!url) return '';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) return url.slice(modules + '/node_modules/'.length);
  const dist = url.indexOf('/dist/');
  return dist >= 0 ? url.slice(dist + 1) : url;
};

/**
 * Reads a .cpuprofile for the samples in [fromUs, toUs] of its own clock (µs after its start):
 * self and inclusive samples per frame, samples per layer, and the trimmed profile.
 */
export function readProfile(profile, fromUs = 0, toUs = Infinity) {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const frameKey = (node) => {
    const { functionName, url, lineNumber } = node.callFrame;
    return `${functionName || '(anonymous)'} ${shortUrl(url)}${url ? `:${lineNumber + 1}` : ''}`;
  };
  const self = new Map();
  const inclusive = new Map();
  const layers = new Map();
  const kept = [];
  const keptDeltas = [];
  let t = 0;
  let lastKept = 0;
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i];
    if (t < fromUs || t > toUs) continue;
    const leaf = nodes.get(profile.samples[i]);
    const { url, functionName } = leaf.callFrame;
    if (functionName === '(idle)') continue;
    total++;
    kept.push(profile.samples[i]);
    keptDeltas.push(kept.length === 1 ? 0 : t - lastKept);
    lastKept = t;
    const key = frameKey(leaf);
    const layer = layerOf(url, functionName);
    self.set(key, { count: (self.get(key)?.count ?? 0) + 1, layer });
    layers.set(layer, (layers.get(layer) ?? 0) + 1);
    const seen = new Set();
    for (let id = leaf.id; id !== undefined; id = parent.get(id)) {
      const node = nodes.get(id);
      const k = frameKey(node);
      if (seen.has(k) || node.callFrame.functionName === '(root)') continue;
      seen.add(k);
      inclusive.set(k, { count: (inclusive.get(k)?.count ?? 0) + 1, layer: layerOf(node.callFrame.url, node.callFrame.functionName) });
    }
  }
  // The trimmed profile: the same nodes (those the kept samples reach), the window's samples.
  const reached = new Set();
  for (const id of new Set(kept)) for (let n = id; n !== undefined && !reached.has(n); n = parent.get(n)) reached.add(n);
  const trimmed = {
    nodes: profile.nodes.filter((n) => reached.has(n.id)).map((n) => ({ ...n, children: (n.children ?? []).filter((c) => reached.has(c)) })),
    startTime: profile.startTime + fromUs,
    endTime: profile.startTime + Math.min(toUs, t),
    samples: kept,
    timeDeltas: keptDeltas,
  };
  return { total, self, inclusive, layers, trimmed };
}

const pct = (n, total) => `${((100 * n) / Math.max(1, total)).toFixed(1)} %`;

/** The Markdown summary of one route's profile. */
export function summarise(name, read, extra) {
  const lines = [
    `### ${name}`,
    '',
    extra,
    '',
    `${read.total} samples of the loaded window (idle left out).`,
    '',
    '| layer | share of the API CPU |',
    '| --- | --- |',
  ];
  for (const [layer, count] of [...read.layers].sort((a, b) => b[1] - a[1])) lines.push(`| ${layer} | ${pct(count, read.total)} |`);
  lines.push('', `Top ${TOP} frames by self time:`, '', '| self | frame | layer |', '| --- | --- | --- |');
  for (const [frame, { count, layer }] of [...read.self].sort((a, b) => b[1].count - a[1].count).slice(0, TOP))
    lines.push(`| ${pct(count, read.total)} | \`${frame.replace(/\|/g, '\\|')}\` | ${layer} |`);
  lines.push(
    '',
    `Top ${TOP} frames by inclusive time, outside pg, Node's core and the native frames:`,
    '',
    '| inclusive | frame | layer |',
    '| --- | --- | --- |',
  );
  const outside = ([, { layer }]) => layer !== 'pg' && layer !== 'node core' && layer !== 'native' && !layer.startsWith('program') && layer !== 'gc';
  for (const [frame, { count, layer }] of [...read.inclusive]
    .filter(outside)
    .sort((a, b) => b[1].count - a[1].count)
    .slice(0, TOP))
    lines.push(`| ${pct(count, read.total)} | \`${frame.replace(/\|/g, '\\|')}\` | ${layer} |`);
  return lines.join('\n');
}

async function main() {
  const db = await createScratchDatabase(adminUrl, 'profile');
  const operatorToken = `op_bench_${randomBytes(16).toString('hex')}`;
  const profDir = mkdtempSync(path.join(os.tmpdir(), 'bench-profile-'));
  const sections = [];
  try {
    // A first API migrates the database and seeds; each route then gets an API (and profile) of its own.
    const seedPort = await freePort();
    const seeder = startNode('seed', API_ENTRY, { ...apiEnv(db.url, seedPort, operatorToken), METRICS_PORT: '0' }, apiNodeArgs());
    await waitForHttp(seeder, `http://127.0.0.1:${seedPort}/v1/healthz`);
    const seedBase = `http://127.0.0.1:${seedPort}`;
    const api = { base: seedBase, ...(await mintWebApp(seedBase, operatorToken, 'bench profile', { withSecret: true })) };
    const users = await seedReaders(api, USERS);
    await stop(seeder);
    const routes = selectRoutes(readRoutes(api, users), process.env.BENCH_PROFILE_ROUTES ?? '0,1,3');
    log(`bench: CPU profiles of ${LABEL}, ${SECONDS} s per route after ${WARMUP} s of warm-up, ${CONNECTIONS} connections`);
    for (const [index, route] of routes.entries()) {
      const dir = path.join(profDir, String(index));
      mkdirSync(dir);
      const port = await freePort();
      const server = startNode(
        'api',
        API_ENTRY,
        { ...apiEnv(db.url, port, operatorToken), METRICS_PORT: '0', SHUTDOWN_DELAY_MS: '0' },
        `${apiNodeArgs()} --cpu-prof --cpu-prof-dir=${dir} --cpu-prof-interval=250`,
      );
      await waitForHttp(server, `http://127.0.0.1:${port}/v1/healthz`);
      await closedLoop(port, route, { connections: CONNECTIONS, ms: WARMUP * 1000 });
      const startedAt = performance.now();
      const before = cpuSeconds(server.child.pid);
      const { done, statuses } = await closedLoop(port, route, { connections: CONNECTIONS, ms: SECONDS * 1000 });
      const cpu = cpuSeconds(server.child.pid) - before;
      const loadMs = performance.now() - startedAt;
      const stoppedAt = performance.now();
      await stop(server);
      const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
      const profile = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
      // The window: the loaded seconds that end where the stop began (the profile's last sample is the exit).
      const lastUs = profile.timeDeltas.reduce((a, b) => a + b, 0);
      const exitUs = (performance.now() - stoppedAt) * 1000;
      const toUs = lastUs - exitUs;
      const fromUs = toUs - loadMs * 1000 + 250_000;
      const read = readProfile(profile, fromUs, toUs - 100_000);
      const extra = `${LABEL}: ${done} requests in ${(loadMs / 1000).toFixed(1)} s (${Math.round(done / (loadMs / 1000))} req/s, ${JSON.stringify(statuses)}), API CPU ${((cpu * 1000) / done).toFixed(3)} ms per request (/proc, user + system; the profiler adds its own).`;
      const section = summarise(route.name, read, extra);
      sections.push(section);
      log(section);
      log('');
      if (OUT && process.env.BENCH_PROFILE_KEEP === '1') {
        mkdirSync(OUT, { recursive: true });
        const slug = route.name
          .replace(/[^a-z0-9]+/gi, '-')
          .replace(/^-|-$/g, '')
          .toLowerCase();
        writeFileSync(path.join(OUT, `${LABEL}-${slug}.cpuprofile`), JSON.stringify(read.trimmed));
      }
    }
    if (OUT) {
      mkdirSync(OUT, { recursive: true });
      writeFileSync(path.join(OUT, `${LABEL}-profiles.md`), `# CPU profiles of the hot reads: ${LABEL}\n\n${sections.join('\n\n')}\n`);
    }
  } finally {
    rmSync(profDir, { recursive: true, force: true });
    await db.drop();
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  killChildren();
  process.exit(1);
});

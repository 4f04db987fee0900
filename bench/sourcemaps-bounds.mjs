// Source-map uploads stay bounded: `npm run build && node bench/sourcemaps-bounds.mjs`.
//
// Starts the compiled API (NODE_ENV=production, production's node flags) on a free loopback
// port against a scratch database on the DATABASE_URL server (dropped afterwards), mints a
// project and a secret key through the operator API, then fires 8 uploads of about 49 MiB
// (one ~12 MB map after another, base64) in parallel. Meanwhile /v1/healthz is called every
// 20 ms. Goals, one line each (`ok` or `MISS`):
//   - the API's peak resident set (VmHWM of /proc/<pid>/status, reset before the uploads by
//     writing 5 to clear_refs) stays under the production memory limit, 768 MiB;
//   - the p99 latency of /v1/healthz during the uploads stays under 100 ms.
// Uploads beyond the per-replica cap wait, then may answer 503 upload_capacity: the counts of
// each status are printed (the goals are about memory and the event loop, not throughput).
//
// Environment: DATABASE_URL (required), BENCH_UPLOADS (8), BENCH_UPLOAD_MIB (49), LOG_LEVEL
// (warn), BENCH_API_NODE_ARGS, BENCH_API_PLAIN_NODE=1, and any SOURCEMAP_* variable (passed
// to the API). Linux only (/proc).
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import {
  API_ENTRY as apiEntry,
  apiEnv,
  apiNodeArgs,
  createScratchDatabase,
  freePort,
  requireDatabaseAndBuild,
  startNode,
  stop,
  waitForHttp,
} from './lib/common.mjs';
import { mintWebApp } from './lib/read-routes.mjs';

const adminUrl = requireDatabaseAndBuild('node bench/sourcemaps-bounds.mjs');
const UPLOADS = Number(process.env.BENCH_UPLOADS ?? 8);
const UPLOAD_BYTES = Number(process.env.BENCH_UPLOAD_MIB ?? 49) * 1024 * 1024;
const RSS_LIMIT_MIB = 768;
const HEALTHZ_P99_MS = 100;
const log = (line = '') => process.stdout.write(`${line}\n`);

function hwmMib(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN) / 1024;
}

let seed = 0x9e3779b9;
function random() {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 0x100000000;
}
const VLQ = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const WORDS = ['const', 'return', 'function', 'await', 'value', 'items', 'index', 'props', 'state', 'render', 'handle', 'error', 'result', 'options'];

/** A version-3 map of about `bytes` bytes: half mappings, half sourcesContent. */
function syntheticMap(i, bytes) {
  const mappings = [];
  let size = 0;
  while (size < bytes / 2) {
    let line = '';
    for (let s = 0; s < 24; s++) {
      if (s > 0) line += ',';
      const len = 4 + Math.floor(random() * 2);
      for (let c = 0; c < len; c++) line += VLQ[Math.floor(random() * 64)];
    }
    mappings.push(line);
    size += line.length + 1;
  }
  const content = [];
  size = 0;
  while (size < bytes / 2) {
    let line = '  ';
    for (let w = 0; w < 8; w++) line += `${WORDS[Math.floor(random() * WORDS.length)]}${Math.floor(random() * 100)} `;
    content.push(line);
    size += line.length + 1;
  }
  return JSON.stringify({
    version: 3,
    file: `chunk-${i}.js`,
    sources: [`src/chunk-${i}.ts`],
    names: WORDS,
    mappings: mappings.join(';'),
    sourcesContent: [content.join('\n')],
  });
}

/** An upload body of about `bytes` bytes: maps of ~12 MB decoded (16 MiB is the per-map limit). */
function uploadBody(release, bytes) {
  const perMap = 12_000_000;
  const files = [];
  let size = 100;
  for (let i = 0; size + (perMap * 4) / 3 + 200 < bytes; i++) {
    const sourceMap = Buffer.from(syntheticMap(i, perMap)).toString('base64');
    files.push({ fileUrl: `https://cdn.example.com/assets/chunk-${i}.js`, sourceMap });
    size += sourceMap.length + 80;
  }
  // Pad the last map's file up to the size with one more, smaller map.
  const rest = Math.floor(((bytes - size - 200) * 3) / 4);
  if (rest > 1000) files.push({ fileUrl: 'https://cdn.example.com/assets/rest.js', sourceMap: Buffer.from(syntheticMap(99, rest)).toString('base64') });
  return Buffer.from(JSON.stringify({ release, environment: 'sandbox', files }));
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function main() {
  const scratch = await createScratchDatabase(adminUrl, 'smb');
  const operatorToken = `op_bench_${randomBytes(16).toString('hex')}`;
  const port = await freePort();
  const passed = Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('SOURCEMAP_')));
  const api = startNode('api', apiEntry, { ...apiEnv(scratch.url, port, operatorToken), ...passed }, apiNodeArgs());
  const { child } = api;
  const apiBase = `http://127.0.0.1:${port}`;
  let stopping = false;
  child.on('exit', (code, signal) => {
    if (!stopping) process.stderr.write(`bench: the API exited during the run (code ${code}, signal ${signal}):\n${api.output()}\n`);
  });
  try {
    await waitForHttp(api, `${apiBase}/v1/healthz`);
    const { secret: key } = await mintWebApp(apiBase, operatorToken, 'bench sourcemaps bounds', { withSecret: true });
    const upload = (body) =>
      fetch(`${apiBase}/v1/releases/sourcemaps`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body,
      }).then(
        async (res) => {
          await res.arrayBuffer();
          return res.status;
        },
        (err) => `failed (${err.cause?.code ?? err.message})`,
      );

    log(`bench: ${os.cpus().length} CPU(s), node ${process.version}, ${UPLOADS} parallel uploads of ${(UPLOAD_BYTES / 1024 / 1024).toFixed(0)} MiB`);
    // Warm-up: one small upload (lazy initialisation, the decode worker's start).
    await upload(uploadBody('warmup', 2 * 1024 * 1024));
    // One body, generated once; each upload gets its own release (same length), so every map is really stored.
    const base = uploadBody('bench-bounds-0', UPLOAD_BYTES).toString('latin1');
    const bodies = Array.from({ length: UPLOADS }, (_, i) =>
      Buffer.from(base.replace('"release":"bench-bounds-0"', `"release":"bench-bounds-${i}"`), 'latin1'),
    );
    log(`bench: bodies of ${(bodies[0].length / 1024 / 1024).toFixed(1)} MiB each`);

    writeFileSync(`/proc/${child.pid}/clear_refs`, '5');
    const idleMib = hwmMib(child.pid);
    const latencies = [];
    let running = true;
    const healthz = (async () => {
      while (running) {
        const started = performance.now();
        await fetch(`${apiBase}/v1/healthz`).then(
          (r) => r.arrayBuffer(),
          () => undefined,
        );
        latencies.push(performance.now() - started);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const started = performance.now();
    const statuses = await Promise.all(bodies.map((body) => upload(body)));
    const seconds = (performance.now() - started) / 1000;
    running = false;
    await healthz;
    const peakMib = hwmMib(child.pid);
    const counts = {};
    for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
    const p99 = percentile(latencies, 99);
    log(`bench: uploads answered ${JSON.stringify(counts)} in ${seconds.toFixed(1)} s; idle RSS ${idleMib.toFixed(0)} MiB`);
    log(`bench: healthz ${latencies.length} calls, p50 ${percentile(latencies, 50).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms`);
    log(
      `${peakMib < RSS_LIMIT_MIB ? 'ok  ' : 'MISS'} sourcemaps-bounds: RSS peak < ${RSS_LIMIT_MIB} MiB during ${UPLOADS} parallel ${(UPLOAD_BYTES / 1024 / 1024).toFixed(0)} MiB uploads: ${peakMib.toFixed(0)} MiB (${((peakMib / RSS_LIMIT_MIB) * 100).toFixed(0)} % of the limit)`,
    );
    log(`${p99 < HEALTHZ_P99_MS ? 'ok  ' : 'MISS'} sourcemaps-bounds: healthz p99 < ${HEALTHZ_P99_MS} ms during the uploads: ${p99.toFixed(1)} ms`);
  } finally {
    stopping = true;
    await stop(api);
    await scratch.drop();
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  process.exit(1);
});

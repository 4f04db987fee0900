// Peak memory of POST /v1/releases/sourcemaps: `npm run build && node bench/sourcemaps-upload.mjs`.
//
// Starts the compiled API (NODE_ENV=production) on a free loopback port against a fresh
// scratch database on the DATABASE_URL server (dropped afterwards), mints a project and keys
// through the operator API, then sends upload batches of about 50 MB (the route's body limit)
// one at a time. Before each request the server's peak-RSS counter is reset (writing 5 to
// /proc/<pid>/clear_refs); after the answer its VmHWM (peak resident set) is read, so each
// figure is the peak of that one request on top of the idle process. VmRSS is also sampled
// every 10 ms as a cross-check.
//
// Shapes (decoded maps are synthetic but realistic: base64-VLQ mappings plus sourcesContent
// of generated code, compressing about 3-4x like real maps):
//   many   100 files of about 370 KB decoded each (~50 MB of base64)
//   large  3 files of about 12.4 MB decoded each   (~50 MB of base64)
// plus, for attribution, the "many" body with an invalid release: parsed, then refused (400).
//
// Environment: DATABASE_URL (required), BENCH_REPEAT (requests per shape, 3), LOG_LEVEL (warn),
// BENCH_API_NODE_ARGS (e.g. "--max-old-space-size=512", after start:prod's node flags;
// BENCH_API_PLAIN_NODE=1 leaves those out), BENCH_KEEP_DB=1. Linux only (/proc).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import { API_ENTRY as apiEntry, ROOT as root, apiEnv, apiNodeArgs, freePort, createScratchDatabase, call, requireDatabaseAndBuild } from './lib/common.mjs';

const adminUrl = requireDatabaseAndBuild('node bench/sourcemaps-upload.mjs');
const REPEAT = Number(process.env.BENCH_REPEAT ?? 3);
const BODY_LIMIT = 50 * 1024 * 1024;
const log = (line = '') => process.stdout.write(`${line}\n`);

/** kB figures of /proc/<pid>/status. */
function memory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssKb: field('VmRSS'), hwmKb: field('VmHWM') };
}

function resetPeak(pid) {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

// ---- synthetic maps (seeded, so every run sends the same bytes) ----------------------------

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
  let mappings = '';
  while (mappings.length < bytes / 2) {
    let line = '';
    for (let s = 0; s < 24; s++) {
      if (s > 0) line += ',';
      const len = 4 + Math.floor(random() * 2);
      for (let c = 0; c < len; c++) line += VLQ[Math.floor(random() * 64)];
    }
    mappings += `${line};`;
  }
  let content = '';
  while (content.length < bytes / 2) {
    let line = '  ';
    for (let w = 0; w < 8; w++) line += `${WORDS[Math.floor(random() * WORDS.length)]}${Math.floor(random() * 100)} `;
    content += `${line}\n`;
  }
  return JSON.stringify({ version: 3, file: `chunk-${i}.js`, sources: [`src/chunk-${i}.ts`], names: WORDS, mappings, sourcesContent: [content] });
}

function batchBody(release, files, decodedBytes) {
  const entries = Array.from({ length: files }, (_, i) => ({
    fileUrl: `https://cdn.example.com/assets/chunk-${i}.js`,
    sourceMap: Buffer.from(syntheticMap(i, decodedBytes)).toString('base64'),
  }));
  const body = JSON.stringify({ release, environment: 'sandbox', files: entries });
  if (body.length > BODY_LIMIT) throw new Error(`body of ${body.length} bytes is over the ${BODY_LIMIT} limit`);
  return body;
}

async function measure(apiBase, key, pid, label, body, expectStatus = 200) {
  resetPeak(pid);
  const before = memory(pid);
  let sampledMaxKb = before.rssKb;
  const sampler = setInterval(() => {
    try {
      sampledMaxKb = Math.max(sampledMaxKb, memory(pid).rssKb);
    } catch {
      // the process is gone; the request below reports it
    }
  }, 10);
  const started = performance.now();
  const res = await fetch(`${apiBase}/v1/releases/sourcemaps`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body,
  }).catch((err) => {
    clearInterval(sampler);
    throw new Error(`${label}: the request failed (${err.message}); did the API run out of memory? (see its output above)`);
  });
  const json = await res.json();
  const ms = performance.now() - started;
  clearInterval(sampler);
  const after = memory(pid);
  if (res.status !== expectStatus || (expectStatus === 200 && json.errors.length > 0))
    throw new Error(`${label}: ${res.status} ${JSON.stringify(json).slice(0, 500)}`);
  return {
    label,
    ms,
    bodyMb: body.length / 1e6,
    beforeMb: before.rssKb / 1024,
    peakMb: after.hwmKb / 1024,
    sampledMb: sampledMaxKb / 1024,
    uploaded: json.uploaded,
  };
}

async function main() {
  const scratch = await createScratchDatabase(adminUrl, 'sm');
  const operatorToken = `op_bench_${randomBytes(16).toString('hex')}`;
  const port = await freePort();
  const child = spawn(process.execPath, [...apiNodeArgs().split(' ').filter(Boolean), apiEntry], {
    cwd: root,
    env: { ...process.env, ...apiEnv(scratch.url, port, operatorToken) },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const apiBase = `http://127.0.0.1:${port}`;
  let stopping = false;
  child.on('exit', (code, signal) => {
    if (!stopping) process.stderr.write(`bench: the API exited during the run (code ${code}, signal ${signal})\n`);
  });
  try {
    for (let i = 0; ; i++) {
      if (child.exitCode !== null) throw new Error(`api exited (${child.exitCode})`);
      if (i > 300) throw new Error('api did not start within 60 s');
      const ok = await fetch(`${apiBase}/v1/healthz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const project = await call(apiBase, 'POST', '/admin/v1/projects', operatorToken, { name: 'bench sourcemaps' });
    const app = await call(apiBase, 'POST', `/admin/v1/projects/${project.id}/apps`, operatorToken, {
      name: 'web',
      platform: 'web',
      allowedOrigins: ['https://app.example.com'],
    });
    const key = app.keys.find((k) => k.kind === 'secret' && k.env === 'sandbox').key;

    log(`bench: ${os.cpus().length} CPU(s), node ${process.version}, ${REPEAT} request(s) per shape`);
    const shapes = [
      { label: 'many  (100 x ~370 KB)', files: 100, bytes: 370_000 },
      { label: 'large (3 x ~12.4 MB)', files: 3, bytes: 12_400_000 },
    ];
    // Warm-up: one small batch, so the first measurement is not paying for lazy initialisation.
    await measure(apiBase, key, child.pid, 'warm-up', batchBody('warmup', 5, 50_000));
    const rows = [];
    // Attribution: the same ~50 MB body refused after parsing (invalid_release), i.e. what
    // body parsing alone costs before any map is touched.
    for (let r = 0; r < REPEAT; r++) {
      const body = batchBody('bench-parse-only', 100, 370_000).replace('"release":"bench-parse-only"', '"release":"not a release"');
      rows.push(await measure(apiBase, key, child.pid, 'parse only (400)', body, 400));
    }
    for (const shape of shapes) {
      for (let r = 0; r < REPEAT; r++) {
        // A fresh release each time: every file is really decoded, compressed and stored (never skipped).
        const body = batchBody(`bench-${shape.files}-${r}`, shape.files, shape.bytes);
        rows.push(await measure(apiBase, key, child.pid, shape.label, body));
      }
    }
    log('');
    log('shape                    body MB  idle RSS MB  peak RSS MB (VmHWM)  sampled max MB  time s');
    for (const row of rows) {
      log(
        `${row.label.padEnd(24)} ${row.bodyMb.toFixed(1).padStart(7)}  ${row.beforeMb.toFixed(0).padStart(11)}  ${row.peakMb.toFixed(0).padStart(19)}  ${row.sampledMb
          .toFixed(0)
          .padStart(14)}  ${(row.ms / 1000).toFixed(2).padStart(6)}`,
      );
    }
    const db = new pg.Client({ connectionString: scratch.url });
    await db.connect();
    const stored = await db.query(`SELECT pg_size_pretty(sum(size_bytes)) AS decoded, pg_size_pretty(sum(octet_length(body))) AS compressed FROM source_maps`);
    await db.end();
    log('');
    log(`maps stored: ${stored.rows[0].decoded} decoded, ${stored.rows[0].compressed} compressed (Brotli)`);
  } finally {
    stopping = true;
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await scratch.drop();
  }
}

main().catch((err) => {
  process.stderr.write(`bench: ${err.stack ?? err}\n`);
  process.exit(1);
});

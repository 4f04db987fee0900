// The benchmark's servers: scratch databases, the reference build, an API build with its
// project and keys, the JetStream buffer of the buffered server, and the ingestion targets.
import { randomBytes } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import { ROOT as root, freePort, createScratchDatabase, waitForHttp, startNode as start, sh, apiEnv } from './common.mjs';
import { ORIGIN, mintWebApp } from './read-routes.mjs';
import { bodySource } from './event-bodies.mjs';
import { REF_COMMIT, adminUrl, log, scratchDatabases, sleep } from './harness.mjs';

// ---- the servers ----------------------------------------------------------------------------

export async function scratchDatabase(label) {
  const db = await createScratchDatabase(adminUrl, label);
  scratchDatabases.push(db);
  return db;
}

/**
 * The reference build (REF_COMMIT, 84a29e2 by default): its tree exported with `git archive`
 * into a directory of the OS temp dir (outside the repository, no worktree metadata), its
 * dependencies linked to today's node_modules when every package it names is installed
 * there, installed with `npm ci` otherwise (or always, with BENCH_REF_INSTALL=ci), then built
 * with its own `nest build`. Reused by later runs while its dist/ exists and its linked
 * dependencies are still all there.
 */
export async function referenceBuild() {
  const dir = path.join(os.tmpdir(), `bench-ref-${REF_COMMIT}`);
  const entry = path.join(dir, 'dist/apps/api/src/main.js');
  const linked = path.join(dir, 'node_modules');
  if (existsSync(entry) && (!lstatSync(linked, { throwIfNoEntry: false })?.isSymbolicLink() || linkable(dir))) return { dir, entry };
  log(`bench: building the reference ${REF_COMMIT} in ${dir} ...`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const archive = path.join(os.tmpdir(), `bench-ref-${REF_COMMIT}.tar`);
  await sh('git', ['archive', '--format=tar', '-o', archive, REF_COMMIT], root);
  await sh('tar', ['-xf', archive, '-C', dir], root);
  rmSync(archive, { force: true });
  if (process.env.BENCH_REF_INSTALL === 'ci' || !linkable(dir)) await sh('npm', ['ci', '--no-audit', '--no-fund'], dir);
  else symlinkSync(path.join(root, 'node_modules'), linked, 'dir');
  await sh(process.execPath, [path.join(dir, 'node_modules/@nestjs/cli/bin/nest.js'), 'build'], dir);
  return { dir, entry };
}

/** Whether every package the reference's package.json names is installed in today's node_modules. */
export function linkable(dir) {
  const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const names = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies });
  return names.every((name) => existsSync(path.join(root, 'node_modules', name, 'package.json')));
}

/** Starts an API build on its own scratch database, mints project, web app and keys, raises the buckets. */
export async function startApi(label, entry, cwd, dbUrl, { nodeArgs = '', withSecret = false, env = {} } = {}) {
  const operatorToken = `op_bench_${randomBytes(16).toString('hex')}`;
  const port = await freePort();
  const proc = start(label, entry, { ...apiEnv(dbUrl, port, operatorToken), METRICS_PORT: '0', ...env }, nodeArgs, cwd);
  // Lines of the server's own clock (--trace-gc counts ms from its start) can be matched to the phases' wall times.
  if (process.env.BENCH_DEBUG) log(`    ${label} (pid ${proc.child.pid}) started at ${Date.now()}`);
  const base = `http://127.0.0.1:${port}`;
  await waitForHttp(proc, `${base}/v1/healthz`);
  const { project, publishable, secret } = await mintWebApp(base, operatorToken, `bench ${label}`, { withSecret });
  return { proc, base, project, publishable, secret, operatorToken, dbUrl };
}

export const NATS_URL = process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222';

/** The local nats-server's pid, to count its CPU (null when it is not a local process). */
export function natsServerPid() {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/stat`, 'utf8').includes('(nats-server)')) return Number(entry);
    } catch {
      // exited meanwhile
    }
  }
  return null;
}

/**
 * The buffered server's stream on BENCH_NATS_URL: `drained()` resolves once its consumer has
 * acknowledged every batch (nothing pending, nothing in flight); `close()` deletes the stream.
 * Null when no NATS server answers.
 */
export async function benchBuffer() {
  if (!NATS_URL) return null;
  let nc;
  try {
    nc = await natsConnect({ servers: NATS_URL, timeout: 2000 });
  } catch {
    log(`bench: no NATS server at ${NATS_URL}; the buffered path is not measured`);
    return null;
  }
  const jsm = await jetstreamManager(nc);
  const stream = `EVENTS_bench_${process.pid}`;
  const consumerInfo = () => jsm.consumers.info(stream, 'writer').catch(() => null);
  return {
    stream,
    natsPid: natsServerPid(),
    async ready() {
      const deadline = Date.now() + 30_000;
      while (!(await consumerInfo())) {
        if (Date.now() > deadline) throw new Error(`the buffered API did not create stream ${stream}`);
        await sleep(100);
      }
    },
    async drained() {
      for (;;) {
        const info = await consumerInfo();
        if (info && info.num_pending === 0 && info.num_ack_pending === 0) return;
        await sleep(50);
      }
    },
    async close() {
      await jsm.streams.delete(stream).catch(() => undefined);
      await nc.close();
    },
  };
}

export function ingestionServer(label, api, bodies = bodySource()) {
  return {
    label,
    url: `${api.base}/v1/events`,
    headers: { authorization: `Bearer ${api.publishable}`, origin: ORIGIN },
    pid: api.proc.child.pid,
    bodies,
    dbUrl: api.dbUrl,
  };
}

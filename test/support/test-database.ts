import path from 'node:path';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions, runMigrationsLocked, startEmbeddedPostgres, type EmbeddedDatabase } from '#platform';
import { embeddedDataDir } from '../../libs/platform/src/database/embedded-postgres.js';
import { DATABASE_SCHEMA } from '../../apps/api/src/database-schema.js';
import { ProcessGuard } from './processes.js';

export interface TestDatabaseHandle {
  url: string;
  adminUrl: string;
  name: string;
}

/**
 * The databases of one test run, made by the global setup: the shared database the suites run
 * on, and the migrated template every database of a suite's own is cloned from.
 */
export interface RunDatabasesHandle extends TestDatabaseHandle {
  template: string;
  embedded?: EmbeddedDatabase;
  /** Stops the embedded server (and removes its staged data) also when the runner dies before the teardown. */
  guard?: ProcessGuard;
}

/** Set by the global setup, inherited by the workers. */
const ADMIN_URL_ENV = 'TEST_ADMIN_DATABASE_URL';
const TEMPLATE_ENV = 'TEST_TEMPLATE_DATABASE';

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function onAdmin<T>(adminUrl: string, work: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.end();
  }
}

/**
 * The run's databases: on DATABASE_URL's server when it is set, otherwise on an embedded
 * PostgreSQL under .data/pg-test (kept in the checkout between runs; a data directory staged
 * outside it, as root in a 0700 checkout, is removed at the end). Migrations are applied once,
 * to the template; the shared database and every suite's own are copies of it, which
 * PostgreSQL makes in a fraction of the time migrating takes. Nothing connects to the template
 * (CREATE DATABASE … TEMPLATE refuses a source with sessions), so it takes no connections.
 */
export async function createRunDatabases(): Promise<RunDatabasesHandle> {
  let embedded: EmbeddedDatabase | undefined;
  let guard: ProcessGuard | undefined;
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    const requested = path.resolve('.data/pg-test');
    const dataDir = await embeddedDataDir(requested);
    guard = new ProcessGuard();
    guard.stopPostgresOf(dataDir);
    if (dataDir !== requested) guard.removeAtEnd(dataDir);
    try {
      embedded = await startEmbeddedPostgres({ dataDir: requested, database: 'postgres', durable: false });
    } catch (err) {
      await guard.finish();
      throw err;
    }
    adminUrl = embedded.adminUrl;
    // The server is this run's alone: databases a killed run left behind go now.
    await dropDatabasesNamed(adminUrl, 'test\\_%');
  }
  const name = `test_${Date.now().toString(36)}_${process.pid}`;
  const template = `${name}_template`;
  await onAdmin(adminUrl, (admin) => admin.query(`CREATE DATABASE "${template}"`));
  const dataSource = new DataSource(dataSourceOptions(withDatabase(adminUrl, template), DATABASE_SCHEMA, 2));
  await dataSource.initialize();
  try {
    await runMigrationsLocked(dataSource);
  } finally {
    await dataSource.destroy();
  }
  await onAdmin(adminUrl, async (admin) => {
    await admin.query(`ALTER DATABASE "${template}" ALLOW_CONNECTIONS false`);
    await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
  });
  return { url: withDatabase(adminUrl, name), adminUrl, name, template, embedded, guard };
}

/** Publishes the run's databases to the workers started after the global setup. */
export function publishRunDatabases(handle: RunDatabasesHandle): void {
  process.env[ADMIN_URL_ENV] = handle.adminUrl;
  process.env[TEMPLATE_ENV] = handle.template;
}

/** Drops the run's databases, the suites' own included (also those of a worker that died), and stops the embedded server. */
export async function dropRunDatabases(handle: RunDatabasesHandle): Promise<void> {
  try {
    await dropDatabasesNamed(handle.adminUrl, handle.name.replaceAll('_', '\\_'), `${handle.name.replaceAll('_', '\\_')}\\_%`);
  } finally {
    await handle.embedded?.stop();
    await handle.guard?.finish();
  }
}

/** Drops every database whose name matches one of the LIKE patterns. */
async function dropDatabasesNamed(adminUrl: string, ...patterns: string[]): Promise<void> {
  await onAdmin(adminUrl, async (admin) => {
    const { rows } = await admin.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE ANY($1::text[])', [patterns]);
    for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  });
}

let ownDatabases = 0;

/**
 * A database of the caller's own, migrated (a copy of the run's template), on the run's
 * server; dropped by dropTestDatabase, or with the run's databases when the caller dies first.
 */
export async function createTestDatabase(): Promise<TestDatabaseHandle> {
  const adminUrl = process.env[ADMIN_URL_ENV];
  const template = process.env[TEMPLATE_ENV];
  if (!adminUrl || !template) throw new Error(`a database of its own needs ${ADMIN_URL_ENV} and ${TEMPLATE_ENV} from the global setup`);
  // Named after the run's databases (the template's prefix) so the run's teardown finds it.
  const name = `${template.slice(0, -'_template'.length)}_own_${process.pid}_${++ownDatabases}`;
  await onAdmin(adminUrl, (admin) => admin.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`));
  return { url: withDatabase(adminUrl, name), adminUrl, name };
}

/** Drops the database, closing whatever sessions still use it. */
export async function dropTestDatabase(handle: TestDatabaseHandle): Promise<void> {
  await onAdmin(handle.adminUrl, (admin) => admin.query(`DROP DATABASE IF EXISTS "${handle.name}" WITH (FORCE)`));
}

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
  embedded?: EmbeddedDatabase;
  /** Stops the embedded server (and removes its staged data) also when the runner dies before the teardown. */
  guard?: ProcessGuard;
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/**
 * A fresh database for one test run: on DATABASE_URL's server when it is set, otherwise on
 * an embedded PostgreSQL under .data/pg-test (kept in the checkout between runs; a data
 * directory staged outside it, as root in a 0700 checkout, is removed at the end). Migrations
 * are applied once here.
 */
export async function createTestDatabase(): Promise<TestDatabaseHandle> {
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
  }
  const name = `test_${Date.now().toString(36)}_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(adminUrl, name);
  const dataSource = new DataSource(dataSourceOptions(url, DATABASE_SCHEMA, 2));
  await dataSource.initialize();
  try {
    await runMigrationsLocked(dataSource);
  } finally {
    await dataSource.destroy();
  }
  return { url, adminUrl, name, embedded, guard };
}

export async function dropTestDatabase(handle: TestDatabaseHandle): Promise<void> {
  try {
    const admin = new pg.Client({ connectionString: handle.adminUrl });
    await admin.connect();
    try {
      await admin.query(`DROP DATABASE IF EXISTS "${handle.name}" WITH (FORCE)`);
    } finally {
      await admin.end();
    }
  } finally {
    await handle.embedded?.stop();
    await handle.guard?.finish();
  }
}

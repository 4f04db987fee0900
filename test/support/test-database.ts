import pg from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions, runMigrationsLocked, startEmbeddedPostgres, type EmbeddedDatabase } from '#platform';
import { DATABASE_SCHEMA } from '../../apps/api/src/database-schema.js';

export interface TestDatabaseHandle {
  url: string;
  adminUrl: string;
  name: string;
  embedded?: EmbeddedDatabase;
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/**
 * A fresh database for one test run: on DATABASE_URL's server when it is set, otherwise on
 * an embedded PostgreSQL under .data/pg-test. Migrations are applied once here.
 */
export async function createTestDatabase(): Promise<TestDatabaseHandle> {
  let embedded: EmbeddedDatabase | undefined;
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    embedded = await startEmbeddedPostgres({ dataDir: '.data/pg-test', database: 'postgres', durable: false });
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
  return { url, adminUrl, name, embedded };
}

export async function dropTestDatabase(handle: TestDatabaseHandle): Promise<void> {
  const admin = new pg.Client({ connectionString: handle.adminUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${handle.name}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
  await handle.embedded?.stop();
}

// `npm run migration:run` (after the build) and, in the image, `node dist/apps/api/src/migrate.js`:
// applies pending migrations to DATABASE_URL under the same advisory lock as start-up, one line
// per applied migration, on PostgreSQL 15 or newer. Kubernetes runs it as the init container of
// every API pod (deploy/base/deployment.yaml): concurrent pods take turns on the lock.
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import {
  DatabaseUnreachableError,
  appliedMigrationNames,
  assertDatabaseReachable,
  dataSourceOptions,
  describeDatabaseUrl,
  runMigrationsLocked,
} from '#platform';
import { DATABASE_SCHEMA } from './database-schema.js';

async function migrate(): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (!url) throw new DatabaseUnreachableError('migration:run needs DATABASE_URL (postgres://user:pass@host:port/db); PostgreSQL 15 or newer');
  await assertDatabaseReachable(url);
  process.stdout.write(`migrating ${describeDatabaseUrl(url)} (PostgreSQL 15+ required; waiting for the migration lock)\n`);
  const dataSource = new DataSource(dataSourceOptions(url, DATABASE_SCHEMA, 2));
  await dataSource.initialize();
  const before = await appliedMigrationNames(dataSource);
  let done = false;
  try {
    await runMigrationsLocked(dataSource);
    done = true;
  } finally {
    // One line per migration this run applied, also when a later one failed.
    const after = await appliedMigrationNames(dataSource);
    const applied = [...after].filter((name) => !before.has(name));
    for (const name of applied) process.stdout.write(`applied ${name}\n`);
    if (done && applied.length === 0) process.stdout.write('nothing to apply: the schema is up to date\n');
    await dataSource.destroy();
  }
}

migrate().then(
  () => process.exit(0),
  (err: unknown) => {
    const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
    process.stderr.write(`migration failed: ${message}\n`);
    process.exit(1);
  },
);

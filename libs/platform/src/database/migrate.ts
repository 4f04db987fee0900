import type { DataSource } from 'typeorm';
import { ADVISORY_LOCKS } from './advisory-locks.js';

const MIGRATION_LOCK_KEY = ADVISORY_LOCKS.migrations;

/** Applies pending migrations under an advisory lock so that replicas starting together take turns. */
export async function runMigrationsLocked(dataSource: DataSource): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    return applied.map((m) => m.name);
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await runner.release();
  }
}

/** Names of the migrations already applied (empty before the first run, when the table does not exist yet). */
export async function appliedMigrationNames(dataSource: DataSource): Promise<Set<string>> {
  const rows = (await dataSource.query(`SELECT name FROM schema_migrations ORDER BY id`).catch(() => [])) as Array<{ name: string }>;
  return new Set(rows.map((r) => r.name));
}

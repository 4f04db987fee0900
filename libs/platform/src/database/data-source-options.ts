import type { DataSourceOptions, MixedList, EntitySchema } from 'typeorm';
import { PooledPgClient } from './pooled-pg-client.js';

export interface DatabaseSchema {
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  entities: MixedList<Function | string | EntitySchema>;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  migrations: MixedList<Function | string>;
}

/** Bounds of the application's database calls (AppConfig DB_STATEMENT_TIMEOUT_MS, DB_POOL_ACQUIRE_TIMEOUT_MS). */
export interface DatabaseTimeouts {
  /** PostgreSQL statement_timeout of every connection of the pool (lock waits included). */
  statementTimeoutMs: number;
  /** How long a caller waits for a pooled connection, or for a new one to connect. */
  poolAcquireTimeoutMs: number;
}

/** How much longer than statement_timeout the client waits for an answer before it gives up on the server. */
export const QUERY_READ_MARGIN_MS = 2_000;

/**
 * The one place that shapes the TypeORM data source: the app, the migration CLI and the tests
 * use it. Without `timeouts` (migrations, CLI, test set-up) statements are not bounded: a
 * migration may legitimately run longer than any request should.
 */
export function dataSourceOptions(url: string, schema: DatabaseSchema, poolSize = 10, timeouts?: DatabaseTimeouts): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: schema.entities,
    migrations: schema.migrations,
    migrationsTableName: 'schema_migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    migrationsRun: false,
    logging: false,
    extra: {
      max: poolSize,
      connectionTimeoutMillis: timeouts?.poolAcquireTimeoutMs ?? 5000,
      // statement_timeout is the server's; the client's read timeout bounds a server that stopped
      // answering (PooledPgClient's own timer in place of pg's query_timeout).
      Client: PooledPgClient,
      ...(timeouts ? { statement_timeout: timeouts.statementTimeoutMs, readTimeoutMillis: timeouts.statementTimeoutMs + QUERY_READ_MARGIN_MS } : {}),
      idleTimeoutMillis: 30_000,
      application_name: 'entitlements-api',
    },
  };
}

export function describeDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`;
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}

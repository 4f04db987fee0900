import type { DataSourceOptions, MixedList, EntitySchema } from 'typeorm';

export interface DatabaseSchema {
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  entities: MixedList<Function | string | EntitySchema>;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  migrations: MixedList<Function | string>;
}

/** The one place that shapes the TypeORM data source: the app, the migration CLI and the tests use it. */
export function dataSourceOptions(url: string, schema: DatabaseSchema, poolSize = 10): DataSourceOptions {
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
      connectionTimeoutMillis: 5000,
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

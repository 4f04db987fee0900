import { DynamicModule, Global, Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { APP_LOGGER, type AppLogger } from '../logging/logger.js';
import { type DatabaseSchema, dataSourceOptions } from './data-source-options.js';
import { runMigrationsLocked } from './migrate.js';

/** Closes the pool last: after every onModuleDestroy (background jobs finish there). */
@Injectable()
class DataSourceCloser implements OnApplicationShutdown {
  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}
  async onApplicationShutdown(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }
}

/** The TypeORM data source (migrations only, never synchronize), closed with the app. */
@Global()
@Module({})
export class DatabaseModule {
  static forRoot(schema: DatabaseSchema): DynamicModule {
    return {
      module: DatabaseModule,
      providers: [
        {
          provide: DataSource,
          inject: [APP_CONFIG, APP_LOGGER],
          useFactory: async (config: AppConfig, logger: AppLogger) => {
            if (!config.databaseUrl) throw new Error('DATABASE_URL is not set');
            if (config.migrationsRun) {
              // Migrations (and waiting for another replica's) are not bounded by the request
              // statement timeout: they run on their own short-lived connections.
              const migrator = new DataSource(dataSourceOptions(config.databaseUrl, schema, 2));
              await migrator.initialize();
              try {
                const applied = await runMigrationsLocked(migrator);
                if (applied.length > 0) logger.info({ applied }, 'migrations applied');
              } finally {
                await migrator.destroy();
              }
            }
            const dataSource = new DataSource(
              dataSourceOptions(config.databaseUrl, schema, config.dbPoolSize, {
                statementTimeoutMs: config.dbStatementTimeoutMs,
                poolAcquireTimeoutMs: config.dbPoolAcquireTimeoutMs,
              }),
            );
            await dataSource.initialize();
            return dataSource;
          },
        },
        DataSourceCloser,
      ],
      exports: [DataSource],
    };
  }
}

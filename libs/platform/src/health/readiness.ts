import { Inject, Injectable, type OnApplicationShutdown, Optional } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { DatabaseProbe } from '../database/database-probe.js';
import { type RedisLease, leaseRedis } from '../redis/shared-redis.js';

export type DependencyCheck = 'ok' | 'down' | 'not_configured';

export interface ReadinessReport {
  status: 'ready' | 'not_ready';
  checks: { database: 'ok' | 'down'; migrations: MigrationsCheck; redis: DependencyCheck };
}

/** ok: every migration the code lists is applied; pending: some are not (or the database did not answer). */
export type MigrationsCheck = 'ok' | 'pending';

/** Why a replica is not ready, as the access log's `code` of its 503: the first that holds. */
export type NotReadyReason = 'shutting_down' | 'database_unreachable' | 'migrations_pending';

export function notReadyReason(report: ReadinessReport, shuttingDown: boolean): NotReadyReason | null {
  if (report.status === 'ready') return null;
  if (shuttingDown) return 'shutting_down';
  if (report.checks.database !== 'ok') return 'database_unreachable';
  return 'migrations_pending';
}

/** TypeORM's migrations table (data-source-options.ts). */
const MIGRATIONS_TABLE = 'schema_migrations';

/** PostgreSQL must answer within this bound for the replica to be ready (docs/operations.md: `/v1/readyz` is 503 until PostgreSQL answers within 1 s). */
export const READINESS_DATABASE_TIMEOUT_MS = 1000;
const READINESS_REDIS_TIMEOUT_MS = 500;

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]);
}

/**
 * The readiness probe: PostgreSQL answers `SELECT 1` within 1 s (on a dedicated one-connection
 * pool, so a busy request pool neither delays the probe nor is taken from), the schema is at
 * the code's migration version (every migration the code lists is in TypeORM's migrations
 * table: a replica started with MIGRATIONS_RUN=false waits for the migration command), Redis is
 * reported but never fails readiness (the limiter fails open), and from the first moment of a
 * SIGTERM the answer is not_ready. Concurrent probes share one check. Once the schema is
 * current the answer is kept (a schema does not go back); until then each probe reads the
 * migrations table instead of `SELECT 1` (one query either way).
 */
export class ReadinessProbe {
  private stopping = false;
  private database: DatabaseProbe | undefined;
  private redis: RedisLease | undefined;
  private inFlight: Promise<ReadinessReport> | undefined;
  private schemaCurrent = false;

  /** expectedMigrations: the names of the migrations the code lists (none: nothing to wait for). */
  constructor(
    private readonly databaseUrl: string | undefined,
    private readonly redisUrl: string | undefined,
    private readonly expectedMigrations: () => readonly string[] = () => [],
  ) {}

  /** SIGTERM: readiness turns 503 at once, for good. */
  beginShutdown(): void {
    this.stopping = true;
  }

  get shuttingDown(): boolean {
    return this.stopping;
  }

  check(): Promise<ReadinessReport> {
    this.inFlight ??= this.runChecks().finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  /** Whether the schema is at this build's head migration (the readiness report's `checks.migrations`). */
  async schemaAtHead(): Promise<boolean> {
    return (await this.checkDatabase()).migrations === 'ok';
  }

  private async runChecks(): Promise<ReadinessReport> {
    const [{ database, migrations }, redis] = await Promise.all([this.checkDatabase(), this.checkRedis()]);
    return { status: !this.stopping && database === 'ok' && migrations === 'ok' ? 'ready' : 'not_ready', checks: { database, migrations, redis } };
  }

  private async checkDatabase(): Promise<{ database: 'ok' | 'down'; migrations: MigrationsCheck }> {
    if (!this.databaseUrl) return { database: 'down', migrations: this.schemaCurrent ? 'ok' : 'pending' };
    this.database ??= new DatabaseProbe(this.databaseUrl, READINESS_DATABASE_TIMEOUT_MS);
    if (this.schemaCurrent) return { database: (await this.database.answers()) ? 'ok' : 'down', migrations: 'ok' };
    const { answered, names } = await this.database.appliedMigrations(MIGRATIONS_TABLE);
    this.schemaCurrent = answered && this.expectedMigrations().every((name) => names.has(name));
    return { database: answered ? 'ok' : 'down', migrations: this.schemaCurrent ? 'ok' : 'pending' };
  }

  private async checkRedis(): Promise<DependencyCheck> {
    if (!this.redisUrl) return 'not_configured';
    this.redis ??= leaseRedis(this.redisUrl, READINESS_REDIS_TIMEOUT_MS, () => undefined);
    const client = this.redis.client;
    try {
      // No offline queue on the shared connection: a first probe waits for it to connect.
      const connected = client.status === 'ready' ? Promise.resolve() : new Promise<void>((resolve) => client.once('ready', () => resolve()));
      await within(
        connected.then(() => client.ping()),
        READINESS_REDIS_TIMEOUT_MS,
      );
      return 'ok';
    } catch {
      return 'down';
    }
  }

  async close(): Promise<void> {
    const redis = this.redis;
    this.redis = undefined;
    const database = this.database;
    this.database = undefined;
    await Promise.all([redis?.release(), database?.close()]);
  }
}

/** The names TypeORM records for the data source's migrations (its rule: the `name` property, else the class name). */
export function migrationNames(dataSource: DataSource): string[] {
  return dataSource.migrations.map((migration) => migration.name ?? migration.constructor.name);
}

/** The process-wide readiness state (Nest provider): main.ts flips it on SIGTERM. */
@Injectable()
export class Readiness extends ReadinessProbe implements OnApplicationShutdown {
  constructor(@Inject(APP_CONFIG) config: AppConfig, @Optional() @Inject(DataSource) dataSource?: DataSource) {
    super(config.databaseUrl, config.redisUrl, () => (dataSource ? migrationNames(dataSource) : []));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }
}

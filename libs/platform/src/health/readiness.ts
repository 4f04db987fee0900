import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { DatabaseProbe } from '../database/database-probe.js';
import { type RedisLease, leaseRedis } from '../redis/shared-redis.js';

export type DependencyCheck = 'ok' | 'down' | 'not_configured';

export interface ReadinessReport {
  status: 'ready' | 'not_ready';
  checks: { database: 'ok' | 'down'; redis: DependencyCheck };
}

/** PostgreSQL must answer within this bound for the replica to be ready (runtime.md). */
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
 * pool, so a busy request pool neither delays the probe nor is taken from), Redis is reported
 * but never fails readiness (the limiter fails open), and from the first moment of a SIGTERM
 * the answer is not_ready. Concurrent probes share one check.
 */
export class ReadinessProbe {
  private stopping = false;
  private database: DatabaseProbe | undefined;
  private redis: RedisLease | undefined;
  private inFlight: Promise<ReadinessReport> | undefined;

  constructor(
    private readonly databaseUrl: string | undefined,
    private readonly redisUrl: string | undefined,
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

  private async runChecks(): Promise<ReadinessReport> {
    const [database, redis] = await Promise.all([this.checkDatabase(), this.checkRedis()]);
    return { status: !this.stopping && database === 'ok' ? 'ready' : 'not_ready', checks: { database, redis } };
  }

  private async checkDatabase(): Promise<'ok' | 'down'> {
    if (!this.databaseUrl) return 'down';
    this.database ??= new DatabaseProbe(this.databaseUrl, READINESS_DATABASE_TIMEOUT_MS);
    return (await this.database.answers()) ? 'ok' : 'down';
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
    this.redis?.release();
    this.redis = undefined;
    const database = this.database;
    this.database = undefined;
    await database?.close();
  }
}

/** The process-wide readiness state (Nest provider): main.ts flips it on SIGTERM. */
@Injectable()
export class Readiness extends ReadinessProbe implements OnApplicationShutdown {
  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    super(config.databaseUrl, config.redisUrl);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }
}

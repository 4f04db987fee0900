import { Inject, Injectable, type OnModuleDestroy, Optional } from '@nestjs/common';
import { APP_CONFIG, APP_LOGGER, type AppConfig, type AppLogger, Clock, type TenantScope, FailOpenStorage } from '#platform';
import { type ErrorAllowanceStore, InProcessErrorAllowanceStore, RedisErrorAllowanceStore } from './error-allowance.store.js';
import { ERROR_ALLOWANCE_WINDOW_MS } from './throttle-plan.js';

/** Test seam: provide an ErrorAllowanceStore here to replace the configured one. */
export const ERROR_ALLOWANCE_STORE_OVERRIDE = Symbol('ERROR_ALLOWANCE_STORE_OVERRIDE');

/**
 * "While throttling, one error event per fingerprint per minute still lands." Claims are
 * per (project, environment, fingerprint), in Redis when REDIS_URL is set (shared by
 * replicas), in-process otherwise. Fails open: if the storage errs, the events land.
 */
@Injectable()
export class ErrorAllowanceService implements OnModuleDestroy {
  private readonly store: ErrorAllowanceStore;
  private readonly failOpen: FailOpenStorage;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly clock: Clock,
    @Inject(APP_LOGGER) logger: AppLogger,
    @Optional() @Inject(ERROR_ALLOWANCE_STORE_OVERRIDE) override?: ErrorAllowanceStore | null,
  ) {
    this.failOpen = new FailOpenStorage(logger, 'error-allowance storage unavailable; failing open');
    this.store =
      override ??
      (config.redisUrl
        ? new RedisErrorAllowanceStore(config.redisUrl, config.redisCommandTimeoutMs, (err) => this.failOpen.warn(err))
        : new InProcessErrorAllowanceStore());
  }

  get failOpenCount(): number {
    return this.failOpen.failures;
  }

  /** Returns the fingerprints whose one-per-minute allowance was claimed now. */
  async claim(scope: TenantScope, fingerprints: readonly string[]): Promise<Set<string>> {
    if (fingerprints.length === 0) return new Set();
    // The hash tag keeps one batch's keys in one Redis Cluster slot.
    const prefix = `ea:{${scope.projectId}:${scope.env}}:`;
    const keys = fingerprints.map((fp) => prefix + fp);
    return this.failOpen.run(
      async () => {
        const claimed = await this.store.claim(keys, this.clock.nowMs(), ERROR_ALLOWANCE_WINDOW_MS);
        return new Set(fingerprints.filter((_fp, i) => claimed.has(keys[i])));
      },
      () => new Set(fingerprints),
    );
  }

  async onModuleDestroy(): Promise<void> {
    await this.store.close();
  }
}

import { Inject, Injectable, OnModuleDestroy, Optional } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Clock } from '../clock/clock.js';
import { APP_LOGGER, type AppLogger } from '../logging/logger.js';
import type { TenantScope } from '../tenancy/tenant-scope.js';
import { ApiError } from '../errors/api-error.js';
import { Metrics } from '../metrics/metrics.js';
import { type BucketStore, InProcessBucketStore, RedisBucketStore } from './bucket-stores.js';
import { FailOpenStorage } from '../redis/fail-open.js';
import { type BucketRule, msUntilAvailable } from './token-bucket.js';

/** Test seam: provide a BucketStore here to replace the configured one. */
export const BUCKET_STORE_OVERRIDE = Symbol('BUCKET_STORE_OVERRIDE');

export interface RateLimitDecision {
  requested: number;
  granted: number;
  /** Tokens left after this decision (may be fractional). */
  tokensLeft: number;
  /** When the part that did not fit could be sent (0 when everything fit). */
  retryAfterMs: number;
  /** Suggested proportional client-side sampling, 0..1. */
  sampleRate: number;
  /** True when the storage failed and the request was let through. */
  failedOpen: boolean;
}

/**
 * Token buckets per (project, environment, bucket), shared through Redis when REDIS_URL is
 * set. On any storage error or timeout the request is allowed (fail open) and counted.
 */
@Injectable()
export class RateLimiterService implements OnModuleDestroy {
  private readonly store: BucketStore;
  private readonly failOpen: FailOpenStorage;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly clock: Clock,
    @Inject(APP_LOGGER) logger: AppLogger,
    @Optional() @Inject(BUCKET_STORE_OVERRIDE) storeOverride?: BucketStore | null,
    @Optional() @Inject(Metrics) private readonly metrics?: Metrics | null,
  ) {
    this.failOpen = new FailOpenStorage(logger, 'rate-limit storage unavailable; failing open');
    this.store =
      storeOverride ??
      (config.redisUrl ? new RedisBucketStore(config.redisUrl, config.redisCommandTimeoutMs, (err) => this.failOpen.warn(err)) : new InProcessBucketStore());
  }

  /** How many decisions were allowed because the bucket storage failed. */
  get failOpenCount(): number {
    return this.failOpen.failures;
  }

  async take(scope: TenantScope, bucket: string, rule: BucketRule, cost: number, options: { partial?: boolean } = {}): Promise<RateLimitDecision> {
    return this.takeKey(`rl:${scope.projectId}:${scope.env}:${bucket}`, bucket, rule, cost, options.partial ?? false);
  }

  /**
   * A bucket of something that is not a tenant (the console's sign-in attempts per client
   * address): `subject` names it, shared through Redis like the others.
   */
  async takeFor(subject: string, bucket: string, rule: BucketRule, cost: number): Promise<RateLimitDecision> {
    return this.takeKey(`rl:${bucket}:${subject}`, bucket, rule, cost, false);
  }

  private async takeKey(key: string, bucket: string, rule: BucketRule, cost: number, partial: boolean): Promise<RateLimitDecision> {
    return this.failOpen.run<RateLimitDecision>(
      async () => {
        const { granted, tokens } = await this.store.take(key, rule, cost, this.clock.nowMs(), partial);
        const missing = cost - granted;
        const retryAfterMs = missing > 0 ? msUntilAvailable(tokens, granted > 0 || partial ? Math.max(1, missing) : cost, rule) : 0;
        const sampleRate = missing === 0 ? 1 : granted > 0 ? granted / cost : Math.min(1, rule.sustained / Math.max(rule.burst, 1));
        this.metrics?.rateLimitDecisions.inc({ bucket, decision: missing === 0 ? 'allowed' : granted > 0 ? 'partial' : 'limited' });
        return { requested: cost, granted, tokensLeft: tokens, retryAfterMs, sampleRate, failedOpen: false };
      },
      () => {
        this.metrics?.rateLimitDecisions.inc({ bucket, decision: 'fail_open' });
        this.metrics?.rateLimitFailOpen.inc({ bucket });
        return { requested: cost, granted: cost, tokensLeft: 0, retryAfterMs: 0, sampleRate: 1, failedOpen: true };
      },
    );
  }

  /** All-or-nothing: throws 429 rate_limited with Retry-After and X-Service-Sample-Rate. */
  async enforce(scope: TenantScope, bucket: string, rule: BucketRule, cost = 1): Promise<void> {
    const decision = await this.take(scope, bucket, rule, cost);
    if (decision.granted < cost) throw ApiError.rateLimited(decision.retryAfterMs, decision.sampleRate);
  }

  async onModuleDestroy(): Promise<void> {
    await this.store.close();
  }
}

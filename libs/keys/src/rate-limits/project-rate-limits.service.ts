import { Injectable } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { BUCKET_NAMES, type BucketName, type BucketRule, DEFAULT_BUCKET_RULES, RateLimiterService, type RateLimitDecision, type TenantScope } from '#platform';
import { ProjectRateLimitsRepository, type RateLimitOverride } from './project-rate-limits.repository.js';

const OVERRIDE_CACHE_TTL_MS = 5_000;

export type RateLimitTable = Record<BucketName, BucketRule>;

/**
 * The spec's bucket table with the project's overrides ("through support", set by the
 * operator API). Overrides are cached for a few seconds and cleared locally on change.
 */
@Injectable()
export class ProjectRateLimits {
  private readonly cache = new Map<string, { table: RateLimitTable; expiresAt: number }>();

  constructor(
    private readonly repository: ProjectRateLimitsRepository,
    private readonly limiter: RateLimiterService,
  ) {}

  async table(projectId: string): Promise<RateLimitTable> {
    const now = performance.now();
    const cached = this.cache.get(projectId);
    if (cached && cached.expiresAt > now) return cached.table;
    const rows = await this.repository.overrides(projectId);
    const table = { ...DEFAULT_BUCKET_RULES } as RateLimitTable;
    for (const row of rows) table[row.bucket] = { sustained: row.sustained, burst: row.burst };
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(projectId, { table, expiresAt: now + OVERRIDE_CACHE_TTL_MS });
    return table;
  }

  /** Replaces the project's overrides; buckets not named go back to the default table. */
  async replaceOverrides(projectId: string, overrides: Partial<RateLimitTable>, at: Date): Promise<RateLimitTable> {
    const rows: RateLimitOverride[] = [];
    for (const bucket of BUCKET_NAMES) {
      const rule = overrides[bucket];
      if (rule) rows.push({ bucket, sustained: rule.sustained, burst: rule.burst });
    }
    await this.repository.replace(projectId, rows, at);
    this.cache.delete(projectId);
    return this.table(projectId);
  }

  /** All-or-nothing: throws 429 rate_limited (Retry-After, X-Service-Sample-Rate). */
  async enforce(scope: TenantScope, bucket: BucketName, cost = 1): Promise<void> {
    const rule = (await this.table(scope.projectId))[bucket];
    await this.limiter.enforce(scope, bucket, rule, cost);
  }

  /** Takes what is available (partial) or all-or-nothing; the caller decides what to do. */
  async take(scope: TenantScope, bucket: BucketName, cost: number, options: { partial?: boolean } = {}): Promise<RateLimitDecision> {
    const rule = (await this.table(scope.projectId))[bucket];
    return this.limiter.take(scope, bucket, rule, cost, options);
  }
}

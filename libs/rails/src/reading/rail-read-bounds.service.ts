import { Injectable } from '@nestjs/common';
import { type BucketName, Clock, TenantScopes } from '#platform';
import { ProjectRateLimits } from '#keys';
import type { PurchaseRail } from '../model/rail-model.js';

/** The project's read-rate bucket of each rail (overridable with `PUT /admin/v1/projects/{id}/rate-limits`). */
export const RAIL_READ_BUCKETS: Readonly<Record<PurchaseRail, BucketName>> = {
  card_payments: 'rail_reads_card_payments',
  ios_store: 'rail_reads_ios_store',
  android_store: 'rail_reads_android_store',
};

/** How long a project's reads of a rail pause after a `429` or `5xx` without Retry-After. */
export const RAIL_READ_BACK_OFF_MS = 30_000;
/** The longest pause a store's Retry-After can impose. */
const MAX_BACK_OFF_MS = 15 * 60_000;
const MAX_TRACKED = 10_000;

/**
 * Bounds of the service's reads of the stores, per project and rail: the project's read rate
 * (a token bucket shared by the replicas through the rate limiter), and a back-off after the
 * store answered `429` or `5xx` (that project and rail only; other projects keep reading).
 * The back-off is held per replica: each replica learns it from its own reads.
 */
@Injectable()
export class RailReadBounds {
  private readonly pausedUntil = new Map<string, number>();

  constructor(
    private readonly limits: ProjectRateLimits,
    private readonly clock: Clock,
  ) {}

  /** 0 when a read may go now; else how long (ms) until it may. */
  async admit(projectId: string, rail: PurchaseRail): Promise<number> {
    const key = `${projectId}|${rail}`;
    const until = this.pausedUntil.get(key);
    const nowMs = this.clock.nowMs();
    if (until !== undefined) {
      if (until > nowMs) return until - nowMs;
      this.pausedUntil.delete(key);
    }
    // One bucket per project and rail, whatever the environment (the stores' quotas are per app).
    const decision = await this.limits.take(TenantScopes.ofVerifiedRailPayload(projectId, 'production'), RAIL_READ_BUCKETS[rail], 1);
    return decision.granted === 1 ? 0 : Math.max(1, decision.retryAfterMs);
  }

  /** The project's sustained read rate of the rail (reads per second), with its overrides. */
  async readsPerSecond(projectId: string, rail: PurchaseRail): Promise<number> {
    return (await this.limits.table(projectId))[RAIL_READ_BUCKETS[rail]].sustained;
  }

  /** The store asked to slow down (or failed): the project's reads of the rail pause. */
  backOff(projectId: string, rail: PurchaseRail, retryAfterMs: number | undefined): number {
    const pauseMs = Math.min(MAX_BACK_OFF_MS, Math.max(1000, retryAfterMs ?? RAIL_READ_BACK_OFF_MS));
    if (this.pausedUntil.size >= MAX_TRACKED) this.pausedUntil.delete(this.pausedUntil.keys().next().value as string);
    this.pausedUntil.set(`${projectId}|${rail}`, this.clock.nowMs() + pauseMs);
    return pauseMs;
  }
}

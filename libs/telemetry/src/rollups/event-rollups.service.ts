import { Injectable } from '@nestjs/common';
import type { TenantScope } from '#platform';
import { type AffectedUserRow, type BreakdownDimension, type DailyViewsRow, type ErrorRollupRow, EventRollupsRepository } from './event-rollups.repository.js';

export type { AffectedUserRow, BreakdownDimension, DailyViewsRow, ErrorRollupRow };

/**
 * What other contexts read of the event rollups (errors, page views, first touches) and
 * the two acquisition writes that do not come from events: a campaign arrival, and the
 * signup counted when an anonymous id becomes a customer.
 */
@Injectable()
export class EventRollups {
  constructor(private readonly repository: EventRollupsRepository) {}

  error(scope: TenantScope, fingerprint: string): Promise<ErrorRollupRow | null> {
    return this.repository.error(scope, fingerprint);
  }

  affectedUsers(scope: TenantScope, fingerprint: string, limit: number): Promise<AffectedUserRow[]> {
    return this.repository.affectedUsers(scope, fingerprint, limit);
  }

  /** How many distinct user ids an error hit (its maintained count); 0 when none. */
  async affectedUserCount(scope: TenantScope, fingerprint: string): Promise<number> {
    return (await this.repository.affectedUserCounts(scope, [fingerprint])).get(fingerprint) ?? 0;
  }

  views(scope: TenantScope, host: string, fromDay: string): Promise<{ series: DailyViewsRow[]; uniqueVisitors: number }> {
    return this.repository.views(scope, host, fromDay);
  }

  breakdown(scope: TenantScope, host: string, dimension: BreakdownDimension, fromDay: string, limit: number): Promise<Array<{ key: string; views: number }>> {
    return this.repository.breakdown(scope, host, dimension, fromDay, limit);
  }

  recordArrival(scope: TenantScope, anonymousId: string, ref: string, atMs: number): Promise<void> {
    return this.repository.recordArrival(scope, anonymousId, ref, atMs);
  }

  /** In the caller's (ambient) transaction, e.g. identify's link hook */
  countSignup(scope: TenantScope, customerId: string, anonymousId: string, atMs: number): Promise<void> {
    return this.repository.countSignup(scope, customerId, anonymousId, atMs);
  }

  signupsBySource(scope: TenantScope, limit: number): Promise<Array<{ source: string; signups: number }>> {
    return this.repository.signupsBySource(scope, limit);
  }
}

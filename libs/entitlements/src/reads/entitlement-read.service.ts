import { Injectable } from '@nestjs/common';
import { Clock, type CrossTenant, type TenantScope } from '#platform';
import { collapseByKey } from '../domain/entitlement-rules.js';
import { EntitlementRepository, toPublicEntitlement } from '../domain/entitlement.repository.js';
import type { PublicEntitlement } from '../domain/public-entitlement.js';
import type { PassedEntitlement } from '../grants/entitlement-change.js';

/** The one read path of entitlements (public read, server read, tier-3 resolve). */
@Injectable()
export class EntitlementReadService {
  constructor(
    private readonly entitlements: EntitlementRepository,
    private readonly clock: Clock,
  ) {}

  /**
   * Active entitlements of one customer of the scope, one per key (when several rails grant
   * the same key the strongest wins: lifetime, then the later validUntil), sorted by key.
   */
  async listActive(scope: TenantScope, customerId: string): Promise<PublicEntitlement[]> {
    const nowMs = this.clock.nowMs();
    const records = await this.entitlements.findActive(scope, customerId, new Date(nowMs));
    return collapseByKey(records.map((record) => toPublicEntitlement(record, nowMs)));
  }

  /**
   * A customer's active rows of every rail (not collapsed) at the clock's now, with the database
   * snapshot (`pg_snapshot` text) they were read in: what a change sink reads again when the
   * state a change handed it may lack another change.
   */
  async activeState(scope: TenantScope, customerId: string): Promise<{ entitlements: PublicEntitlement[]; snapshot: string }> {
    const nowMs = this.clock.nowMs();
    const { records, snapshot } = await this.entitlements.findActiveWithSnapshot(scope, customerId, new Date(nowMs));
    return { entitlements: records.map((record) => toPublicEntitlement(record, nowMs)), snapshot };
  }

  /** Rows still marked active whose validUntil fell in (fromMs, toMs] and were written before it: time ended them (the expiry scan's read). */
  passedBetween(queue: CrossTenant, fromMs: number, toMs: number, limit: number): Promise<PassedEntitlement[]> {
    return this.entitlements.passedBetween(queue, fromMs, toMs, limit);
  }
}

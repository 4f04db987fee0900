import { Injectable } from '@nestjs/common';
import { Clock, type TenantScope } from '#platform';
import { collapseByKey } from '../domain/entitlement-rules.js';
import { EntitlementRepository, toPublicEntitlement } from '../domain/entitlement.repository.js';
import type { PublicEntitlement } from '../domain/public-entitlement.js';

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
}

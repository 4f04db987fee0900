import { Injectable } from '@nestjs/common';
import { Clock, type TenantScope } from '#platform';
import { isActiveAt, type EntitlementState, type Rail } from '../domain/entitlement-rules.js';
import { EntitlementHistoryRepository } from './entitlement-history.repository.js';

/** Where an entitlement came from, as the operator console shows it. */
export type EntitlementOrigin = 'grant' | 'rail' | 'migration';

export interface EntitlementHistoryEntry {
  key: string;
  active: boolean;
  state: EntitlementState;
  source: EntitlementOrigin;
  rail: Rail;
  productId: string;
  subscriptionId: string;
  /** Unix seconds; null = lifetime. */
  validUntil: number | null;
  /** Unix seconds of the row's creation (the first grant of the key on this rail). */
  grantedAt: number;
  updatedAt: number;
}

/** Migration grants are manual rows whose subscription id is the migration's audit event id. */
const MIGRATION_EVENT_PREFIX = 'srv_migrate_';

/** The operator console's view of one customer's entitlements, active and past. */
@Injectable()
export class EntitlementHistory {
  constructor(
    private readonly history: EntitlementHistoryRepository,
    private readonly clock: Clock,
  ) {}

  /** Every entitlement of one customer, active and past, sorted by key (at most `limit`). */
  async of(scope: TenantScope, customerId: string, limit = 200): Promise<EntitlementHistoryEntry[]> {
    const rows = await this.history.ofCustomer(scope, customerId, limit);
    const nowMs = this.clock.nowMs();
    return rows.map((r) => ({
      key: r.key,
      active: isActiveAt(r.state, r.validUntil, nowMs),
      state: r.state,
      source: r.rail !== 'manual' ? 'rail' : r.subscriptionId.startsWith(MIGRATION_EVENT_PREFIX) ? 'migration' : 'grant',
      rail: r.rail,
      productId: r.productId,
      subscriptionId: r.subscriptionId,
      validUntil: r.validUntil,
      grantedAt: r.createdAt,
      updatedAt: r.updatedAt,
    }));
  }
}

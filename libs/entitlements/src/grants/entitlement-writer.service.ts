import { Injectable } from '@nestjs/common';
import { Clock, type TenantScope } from '#platform';
import type { EntitlementState, Rail } from '../domain/entitlement-rules.js';
import { type EntitlementRecord, EntitlementRepository, type EntitlementWrite, toPublicEntitlement } from '../domain/entitlement.repository.js';
import type { PublicEntitlement } from '../domain/public-entitlement.js';

export interface RailEntitlementWrite {
  customerId: string;
  entitlementKey: string;
  rail: Rail;
  productId: string;
  subscriptionId: string;
  state: EntitlementState;
  /** Unix seconds; null = lifetime. */
  validUntil: number | null;
  /** Audit entry written with this change, if any. */
  auditEventId?: string | null;
}

/**
 * For the purchase rails (and migration): writes a rail's current view of one entitlement
 * into the one model, in the caller's transaction (so the caller appends its audit entry in
 * the same one). Insert or overwrite of the row (customer, key, rail).
 */
@Injectable()
export class EntitlementWriter {
  constructor(
    private readonly entitlements: EntitlementRepository,
    private readonly clock: Clock,
  ) {}

  async write(scope: TenantScope, input: RailEntitlementWrite): Promise<PublicEntitlement> {
    const nowMs = this.clock.nowMs();
    const record: EntitlementRecord = await this.entitlements.upsert(scope, entitlementWriteOf(input), new Date(nowMs));
    return toPublicEntitlement(record, nowMs);
  }

  /** Several rows of distinct (customer, key, rail) in one statement, each as `write` writes it; answered in their order. */
  async writeMany(scope: TenantScope, inputs: readonly RailEntitlementWrite[]): Promise<PublicEntitlement[]> {
    const nowMs = this.clock.nowMs();
    const records = await this.entitlements.upsertMany(scope, inputs.map(entitlementWriteOf), new Date(nowMs));
    return records.map((record) => toPublicEntitlement(record, nowMs));
  }

  /** The stored row of (customer, key, rail), locked in the caller's transaction; null when absent. */
  async current(scope: TenantScope, customerId: string, entitlementKey: string, rail: Rail): Promise<PublicEntitlement | null> {
    const record = await this.entitlements.lock(scope, customerId, entitlementKey, rail);
    return record ? toPublicEntitlement(record, this.clock.nowMs()) : null;
  }

  /** Moves the rail-derived entitlements of a rail-only customer to the customer it is folded into. */
  moveRailEntitlements(scope: TenantScope, fromCustomerId: string, toCustomerId: string): Promise<number> {
    return this.entitlements.moveRailRows(scope, fromCustomerId, toCustomerId, this.clock.now());
  }
}

/** The repository's row write of a rail writer's input. */
function entitlementWriteOf(input: RailEntitlementWrite): EntitlementWrite {
  return {
    customerId: input.customerId,
    key: input.entitlementKey,
    rail: input.rail,
    productId: input.productId,
    subscriptionId: input.subscriptionId,
    state: input.state,
    validUntil: input.validUntil,
    lastEventId: input.auditEventId ?? null,
  };
}

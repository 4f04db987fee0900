import { Injectable } from '@nestjs/common';
import { Clock, type TenantScope } from '#platform';
import type { AuthContext } from '#keys';
import { CustomerDirectory } from '#identity';
import { type CustomerHints, EntitlementQueries, ProductCatalog, assertCustomerIdFormat } from '#entitlements';
import { isActiveAt } from '../lifecycle/access.js';
import { toSeconds } from '../lifecycle/lifecycle-outcome.js';
import type { Subscription } from '../lifecycle/subscription.js';
import type { RailSubscriptionRecord } from '../model/rail-model.js';
import { RailSubscriptionsRepository } from '../model/rail-subscriptions.repository.js';
import { willRenew } from '../model/subscription-events.js';
import type { SubscriptionList } from './subscription.view.js';

/** At most this many subscriptions per answer. */
export const SUBSCRIPTION_READ_LIMIT = 100;

/**
 * The object of a record applied before the lifecycle was stored (or by a rail that does not
 * derive it): what the record knows. `active` while the record is active and not past its end,
 * else `expired` (reason `unknown`); a normal period, no price, no dates the record lacks.
 */
export function subscriptionOfRecord(
  record: RailSubscriptionRecord,
  entitlementKeys: readonly string[],
  env: TenantScope['env'],
  nowSeconds: number,
): Subscription {
  const live = record.state === 'active' && (record.validUntil === null || nowSeconds < record.validUntil);
  const railTime = toSeconds(record.railTimeMs);
  // Time ended an active record at its end; the rail ended an inactive one at its rail time (or earlier, at its end).
  const endedAt = record.state === 'active' ? record.validUntil : Math.min(record.validUntil ?? railTime, railTime);
  return {
    object: 'subscription',
    id: record.subscriptionId,
    rail: record.rail,
    productId: record.productId,
    entitlementKeys: [...entitlementKeys],
    kind: record.validUntil === null ? 'non_renewing' : 'auto_renewing',
    state: live ? 'active' : 'expired',
    periodType: 'normal',
    willRenew: live && record.validUntil !== null && willRenew(record.state, record.rawStatus),
    isActive: live,
    purchasedAt: railTime,
    originalPurchasedAt: railTime,
    currentPeriodStartsAt: null,
    currentPeriodEndsAt: record.validUntil,
    accessEndsAt: live ? record.validUntil : endedAt,
    unsubscribeDetectedAt: null,
    billingIssueDetectedAt: null,
    gracePeriodEndsAt: null,
    pausedAt: null,
    autoResumeAt: null,
    expiredAt: live ? null : endedAt,
    expirationReason: live ? null : 'unknown',
    refundedAt: null,
    ownershipType: 'purchased',
    pendingProductId: null,
    offer: null,
    price: null,
    priceChange: null,
    storeEnvironment: env === 'sandbox' ? 'sandbox' : 'production',
    updatedAt: record.updatedAt,
  };
}

/** Live ones first, then the latest change first (then by rail and id, for a stable order). */
export function orderSubscriptions(subscriptions: Subscription[]): Subscription[] {
  return [...subscriptions].sort(
    (a, b) => Number(b.isActive) - Number(a.isActive) || b.updatedAt - a.updatedAt || a.rail.localeCompare(b.rail) || a.id.localeCompare(b.id),
  );
}

/** The use cases behind the subscription reads (public, server, operator). */
@Injectable()
export class SubscriptionReads {
  constructor(
    private readonly clock: Clock,
    private readonly subscriptions: RailSubscriptionsRepository,
    private readonly catalog: ProductCatalog,
    private readonly entitlementQueries: EntitlementQueries,
    private readonly customers: CustomerDirectory,
  ) {}

  /** Public read (either key kind), one customer hint as the entitlements read takes it; unknown customer: empty list and "". */
  async publicRead(auth: AuthContext, hints: CustomerHints): Promise<SubscriptionList> {
    const customerId = await this.entitlementQueries.customerOfHints(auth, hints);
    if (!customerId) return { object: 'list', data: [], serviceCustomerId: '', env: auth.env };
    return this.list(auth, customerId);
  }

  /** Server or operator read: a customer of the scope, else the caller's error. */
  async customerRead(scope: TenantScope, customerId: string, unknown: () => Error): Promise<SubscriptionList> {
    assertCustomerIdFormat(customerId);
    if (!(await this.customers.isActiveCustomer(scope, customerId))) throw unknown();
    return this.list(scope, customerId);
  }

  /** The customer's subscription objects at the clock: stored objects with `isActive` at now, else built from the record. */
  async list(scope: TenantScope, customerId: string): Promise<SubscriptionList> {
    const nowMs = this.clock.nowMs();
    const nowSeconds = toSeconds(nowMs);
    const records = await this.subscriptions.listForReads(scope, customerId, nowMs, SUBSCRIPTION_READ_LIMIT);
    const data = await Promise.all(
      records.map(async (record) => {
        if (record.subscription) return { ...record.subscription, isActive: isActiveAt(record.subscription, nowSeconds) };
        const keys = new Set<string>();
        for (const item of record.items) for (const key of await this.catalog.entitlementKeysFor(scope.projectId, record.rail, item.productId)) keys.add(key);
        return subscriptionOfRecord(record, [...keys], scope.env, nowSeconds);
      }),
    );
    return { object: 'list', data: orderSubscriptions(data), serviceCustomerId: customerId, env: scope.env };
  }
}

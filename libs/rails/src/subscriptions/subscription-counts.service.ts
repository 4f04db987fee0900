import { Injectable } from '@nestjs/common';
import { Clock, type TenantScope } from '#platform';
import type { PurchaseRail } from '../model/rail-model.js';
import { RailSubscriptionsRepository } from '../model/rail-subscriptions.repository.js';

/** Counts over the subscription objects that other contexts read (reporting's revenue figures). */
@Injectable()
export class SubscriptionCounts {
  constructor(
    private readonly clock: Clock,
    private readonly subscriptions: RailSubscriptionsRepository,
  ) {}

  /** Subscriptions in a free trial that gives access now, on every rail and per rail. */
  async activeTrials(scope: TenantScope): Promise<{ total: number; byRail: Record<PurchaseRail, number> }> {
    const counts = await this.subscriptions.countActiveTrials(scope, this.clock.nowMs());
    const byRail = { ios_store: 0, card_payments: 0, android_store: 0 } satisfies Record<PurchaseRail, number>;
    for (const rail of Object.keys(byRail) as PurchaseRail[]) byRail[rail] = counts.get(rail) ?? 0;
    return { total: byRail.ios_store + byRail.card_payments + byRail.android_store, byRail };
  }
}

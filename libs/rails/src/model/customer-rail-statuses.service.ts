import { Injectable } from '@nestjs/common';
import type { TenantScope } from '#platform';
import type { CustomerRailStatus, RailSubscriptionRecord } from './rail-model.js';
import { RailSubscriptionsRepository } from './rail-subscriptions.repository.js';
import type { Subscription } from '../lifecycle/subscription.js';
import { SubscriptionReads } from '../subscriptions/subscription-reads.service.js';

/** What the rails know of customers, for other contexts (the subscriptions table stays the rails' own). */
@Injectable()
export class CustomerRailStatuses {
  constructor(
    private readonly subscriptions: RailSubscriptionsRepository,
    private readonly reads: SubscriptionReads,
  ) {}

  /**
   * Every listed customer's rail status at `nowMs` (a customer without a rail record reads as
   * such), in the ambient transaction when one is open.
   */
  of(scope: TenantScope, customerIds: readonly string[], nowMs: number): Promise<Map<string, CustomerRailStatus>> {
    return this.subscriptions.statusOfCustomers(scope, customerIds, nowMs);
  }

  /** The customer's subscription records on every rail, newest change first (at most `limit`). */
  async subscriptionsOf(scope: TenantScope, customerId: string, limit = 50): Promise<RailSubscriptionRecord[]> {
    return (await this.subscriptions.listForCustomer(scope, customerId)).slice(0, limit);
  }

  /** The customer's subscription objects at the clock, live ones first (the subscription reads' list). */
  async subscriptionObjectsOf(scope: TenantScope, customerId: string): Promise<Subscription[]> {
    return (await this.reads.list(scope, customerId)).data;
  }
}

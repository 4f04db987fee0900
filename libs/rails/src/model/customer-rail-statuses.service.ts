import { Injectable } from '@nestjs/common';
import type { TenantScope } from '#platform';
import type { CustomerRailStatus, RailSubscriptionRecord } from './rail-model.js';
import { RailSubscriptionsRepository } from './rail-subscriptions.repository.js';

/** What the rails know of customers, for other contexts (the subscriptions table stays the rails' own). */
@Injectable()
export class CustomerRailStatuses {
  constructor(private readonly subscriptions: RailSubscriptionsRepository) {}

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
}

import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { TenantScope } from '#platform';
import type { CustomerRailStatus } from './rail-model.js';
import { RailSubscriptionsRepository } from './rail-subscriptions.repository.js';

/** What the rails know of customers, for other contexts (the subscriptions table stays the rails' own). */
@Injectable()
export class CustomerRailStatuses {
  constructor(private readonly subscriptions: RailSubscriptionsRepository) {}

  /** Every listed customer's rail status at `nowMs` (a customer without a rail record reads as such); in `manager`'s transaction when given. */
  of(scope: TenantScope, customerIds: readonly string[], nowMs: number, manager?: EntityManager): Promise<Map<string, CustomerRailStatus>> {
    return this.subscriptions.statusOfCustomers(scope, customerIds, nowMs, manager);
  }
}

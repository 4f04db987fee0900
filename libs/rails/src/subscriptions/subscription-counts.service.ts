import { Injectable } from '@nestjs/common';
import { Clock, type TenantScope } from '#platform';
import { RailSubscriptionsRepository } from '../model/rail-subscriptions.repository.js';

/** Counts over the subscription objects that other contexts read (reporting's revenue figures). */
@Injectable()
export class SubscriptionCounts {
  constructor(
    private readonly clock: Clock,
    private readonly subscriptions: RailSubscriptionsRepository,
  ) {}

  /** Subscriptions in a free trial that gives access now. */
  activeTrials(scope: TenantScope): Promise<number> {
    return this.subscriptions.countActiveTrials(scope, this.clock.nowMs());
  }
}

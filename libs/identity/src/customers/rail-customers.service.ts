import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { Clock, type TenantScope } from '#platform';
import { ALIAS_TYPES, USER_ID_PATTERN } from '../domain/identifier-rules.js';
import { newCustomerId, newMergeReviewId } from '../domain/ids.js';
import { IdentityRepository } from './identity.repository.js';

/**
 * What the notification rails need of the alias graph beyond RailIdentity, inside the rail's
 * own transaction: developer user ids named by a rail (resolved or created like identify),
 * whether a customer is rail-only (no developer or anonymous id), folding a rail-only
 * customer's rail aliases into another, and queueing conflicts for review like identify's.
 */
@Injectable()
export class RailCustomers {
  constructor(
    private readonly repository: IdentityRepository,
    private readonly clock: Clock,
  ) {}

  /** The active customer of a developer user id, or null (no creation). */
  async findDeveloperUser(manager: EntityManager, scope: TenantScope, userId: string): Promise<string | null> {
    if (!USER_ID_PATTERN.test(userId)) return null;
    return this.repository.findCustomerIdByAlias(scope, ALIAS_TYPES.developer, userId, {}, manager);
  }

  /** Resolved or created like identify (without an anonymous id): the customer of a developer user id. Null for an invalid id. */
  async resolveDeveloperUser(manager: EntityManager, scope: TenantScope, userId: string): Promise<string | null> {
    if (!USER_ID_PATTERN.test(userId)) return null;
    const found = await this.findDeveloperUser(manager, scope, userId);
    if (found) return found;
    const customerId = newCustomerId();
    const now = this.clock.now();
    await this.repository.insertCustomer(scope, customerId, now, manager);
    // A concurrent identify of the same id surfaces as 23505; the caller's transaction retries.
    await this.repository.insertAlias(scope, { type: ALIAS_TYPES.developer, value: userId }, customerId, 'self_asserted', now, manager);
    return customerId;
  }

  /** True when the customer has no developer or anonymous id (only rail ids). */
  async isRailOnly(manager: EntityManager, scope: TenantScope, customerId: string): Promise<boolean> {
    const personal = await this.repository.personalAliases(scope, customerId, manager);
    return personal.userIds.length === 0 && personal.anonymousIds.length === 0;
  }

  /** Moves every rail alias of a rail-only customer to another customer. */
  async moveRailAliases(manager: EntityManager, scope: TenantScope, fromCustomerId: string, toCustomerId: string): Promise<number> {
    await this.repository.lockCustomer(scope, fromCustomerId, manager);
    await this.repository.lockCustomer(scope, toCustomerId, manager);
    return this.repository.moveRailAliases(scope, fromCustomerId, toCustomerId, manager);
  }

  /** Queues "these two customers may be one" for review, once per pair. */
  async queueConflict(manager: EntityManager, scope: TenantScope, canonicalCustomerId: string, otherCustomerId: string): Promise<void> {
    if (canonicalCustomerId === otherCustomerId) return;
    const personal = await this.repository.personalAliases(scope, canonicalCustomerId, manager);
    await this.repository.queueMergeReview(
      scope,
      {
        id: newMergeReviewId(),
        developerUserId: personal.userIds[0] ?? null,
        anonymousId: null,
        canonicalCustomerId,
        otherCustomerId,
      },
      this.clock.now(),
      manager,
    );
  }
}

import { Injectable } from '@nestjs/common';
import { Clock, type TenantScope } from '#platform';
import { ALIAS_TYPES, USER_ID_PATTERN } from '../domain/identifier-rules.js';
import { newCustomerId, newMergeReviewId } from '../domain/ids.js';
import { CustomerDirectory } from './customer-directory.service.js';
import { IdentityRepository } from './identity.repository.js';

/** One alias node of the graph (`ios_original_transaction_id`, `card_customer_id` …). */
export interface AliasNode {
  type: string;
  value: string;
}

/**
 * What the purchase rails need of the alias graph, inside the rail's own (ambient)
 * transaction: rail ids are alias nodes of a customer; developer user ids named by a rail are
 * resolved or created like identify; a rail-only customer (no developer or anonymous id) can
 * have its rail aliases folded into another; conflicts are queued for review like identify's.
 * Never merges customers. A node still held by a forgotten customer is released before it is
 * linked again (as identify does).
 */
@Injectable()
export class RailCustomers {
  constructor(
    private readonly repository: IdentityRepository,
    private readonly directory: CustomerDirectory,
    private readonly clock: Clock,
  ) {}

  /** The active customer of a node, or null (unknown, or its customer is forgotten). */
  findByAlias(scope: TenantScope, node: AliasNode): Promise<string | null> {
    return this.repository.findCustomerIdByAlias(scope, node.type, node.value, {});
  }

  /** Whether `customerId` names an active (not forgotten) customer of the scope (the directory's rule). */
  isActiveCustomer(scope: TenantScope, customerId: string): Promise<boolean> {
    return this.directory.isActiveCustomer(scope, customerId);
  }

  /**
   * Creates a rail-only customer whose only alias is `node`. A concurrent creation for the
   * same node surfaces as a unique violation (23505): run the caller's transaction with
   * `sql.transaction(work, { retry: true })`, the retry then finds the winner's customer.
   */
  async createRailCustomer(scope: TenantScope, node: AliasNode): Promise<string> {
    const now = this.clock.now();
    await this.releaseIfForgotten(scope, node);
    const customerId = newCustomerId();
    await this.repository.insertCustomer(scope, customerId, now);
    await this.repository.insertAlias(scope, node, customerId, 'self_asserted', now);
    return customerId;
  }

  /** Links `node` to `customerId` unless it is already linked (to anyone); returns whether this call linked it. */
  async linkAliasIfAbsent(scope: TenantScope, customerId: string, node: AliasNode): Promise<boolean> {
    await this.releaseIfForgotten(scope, node);
    return this.repository.insertAliasIfAbsent(scope, node, customerId, 'self_asserted', this.clock.now());
  }

  /** The active customer of a developer user id, or null (no creation). */
  async findDeveloperUser(scope: TenantScope, userId: string): Promise<string | null> {
    if (!USER_ID_PATTERN.test(userId)) return null;
    return this.repository.findCustomerIdByAlias(scope, ALIAS_TYPES.developer, userId, {});
  }

  /** Resolved or created like identify (without an anonymous id): the customer of a developer user id. Null for an invalid id. */
  async resolveDeveloperUser(scope: TenantScope, userId: string): Promise<string | null> {
    if (!USER_ID_PATTERN.test(userId)) return null;
    const found = await this.findDeveloperUser(scope, userId);
    if (found) return found;
    const customerId = newCustomerId();
    const now = this.clock.now();
    await this.repository.insertCustomer(scope, customerId, now);
    // A concurrent identify of the same id surfaces as 23505; the caller's transaction retries.
    await this.repository.insertAlias(scope, { type: ALIAS_TYPES.developer, value: userId }, customerId, 'self_asserted', now);
    return customerId;
  }

  /** True when the customer has no developer or anonymous id (only rail ids). */
  async isRailOnly(scope: TenantScope, customerId: string): Promise<boolean> {
    const personal = await this.repository.personalAliases(scope, customerId);
    return personal.userIds.length === 0 && personal.anonymousIds.length === 0;
  }

  /** Moves every rail alias of a rail-only customer to another customer. */
  async moveRailAliases(scope: TenantScope, fromCustomerId: string, toCustomerId: string): Promise<number> {
    await this.repository.lockCustomer(scope, fromCustomerId);
    await this.repository.lockCustomer(scope, toCustomerId);
    return this.repository.moveRailAliases(scope, fromCustomerId, toCustomerId);
  }

  /** Queues "these two customers may be one" for review, once per pair. */
  async queueConflict(scope: TenantScope, canonicalCustomerId: string, otherCustomerId: string): Promise<void> {
    if (canonicalCustomerId === otherCustomerId) return;
    const personal = await this.repository.personalAliases(scope, canonicalCustomerId);
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
    );
  }

  private async releaseIfForgotten(scope: TenantScope, node: AliasNode): Promise<void> {
    const hits = await this.repository.findAliases(scope, [node]);
    if (hits.some((hit) => hit.forgotten)) await this.repository.releaseForgottenAliases(scope, hits);
  }
}

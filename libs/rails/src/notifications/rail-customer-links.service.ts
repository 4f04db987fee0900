import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { Clock, type TenantScope } from '#platform';
import { EntitlementChangeFeed, EntitlementWriter } from '#entitlements';
import { type AliasNode, RailCustomers, RailIdentity } from '#identity';
import { RailRevenueFeed } from '../model/rail-revenue-feed.service.js';
import { RailSubscriptionsRepository } from '../model/rail-subscriptions.repository.js';

export interface NamedCustomerHints {
  serviceCustomerId: string | null;
  developerUserId: string | null;
}

/** How a rail id and the customer a notification names were reconciled. */
export type LinkOutcome =
  | { kind: 'linked'; customerId: string }
  | { kind: 'already_linked'; customerId: string }
  | { kind: 'folded'; customerId: string; railOnlyCustomerId: string }
  | { kind: 'conflict'; customerId: string; namedCustomerId: string };

/**
 * "Whose purchase it is" for rails whose ids arrive with hints (card payments, Android):
 * rail id alias first, then the named customer; a rail-only customer is folded into a named
 * one; any other disagreement is queued for review, never merged.
 */
@Injectable()
export class RailCustomerLinks {
  constructor(
    private readonly customers: RailCustomers,
    private readonly identity: RailIdentity,
    private readonly subscriptions: RailSubscriptionsRepository,
    private readonly writer: EntitlementWriter,
    private readonly clock: Clock,
    private readonly changes: EntitlementChangeFeed,
    private readonly revenue: RailRevenueFeed,
  ) {}

  /** The active customer of a rail node (a forgotten customer's node reads as unknown, as in purchase sync). */
  findByAlias(manager: EntityManager, scope: TenantScope, node: AliasNode): Promise<string | null> {
    return this.identity.findCustomerByAlias(scope, node, manager);
  }

  /** The customer the hints name, without creating one: a `cdcust_` id of the scope, else a developer user id's customer. */
  async findNamed(manager: EntityManager, scope: TenantScope, hints: NamedCustomerHints): Promise<string | null> {
    if (hints.serviceCustomerId) {
      if (await this.identity.isActiveCustomer(scope, hints.serviceCustomerId, manager)) return hints.serviceCustomerId;
    }
    if (hints.developerUserId) return this.customers.findDeveloperUser(manager, scope, hints.developerUserId);
    return null;
  }

  /** The named customer, the developer user's created like identify when unknown; null when nothing usable is named. */
  async resolveNamed(manager: EntityManager, scope: TenantScope, hints: NamedCustomerHints): Promise<string | null> {
    const found = await this.findNamed(manager, scope, hints);
    if (found) return found;
    if (hints.developerUserId) return this.customers.resolveDeveloperUser(manager, scope, hints.developerUserId);
    return null;
  }

  /**
   * Links the rail node to `namedCustomerId`: unknown node → linked; same customer → nothing;
   * held by a rail-only customer → that customer is folded into the named one; held by a
   * customer with a developer or anonymous id → a review is queued and nothing moves.
   */
  async link(manager: EntityManager, scope: TenantScope, node: AliasNode, namedCustomerId: string): Promise<LinkOutcome> {
    const holder = await this.findByAlias(manager, scope, node);
    if (!holder) {
      await this.identity.linkAliasIfAbsent(scope, namedCustomerId, node, manager);
      return { kind: 'linked', customerId: namedCustomerId };
    }
    if (holder === namedCustomerId) return { kind: 'already_linked', customerId: holder };
    if (await this.customers.isRailOnly(manager, scope, holder)) {
      await this.fold(manager, scope, holder, namedCustomerId);
      return { kind: 'folded', customerId: namedCustomerId, railOnlyCustomerId: holder };
    }
    await this.customers.queueConflict(manager, scope, holder, namedCustomerId);
    return { kind: 'conflict', customerId: holder, namedCustomerId };
  }

  /** Queues "these may be one customer" for review (never merges). */
  queueConflict(manager: EntityManager, scope: TenantScope, holderCustomerId: string, namedCustomerId: string): Promise<void> {
    return this.customers.queueConflict(manager, scope, holderCustomerId, namedCustomerId);
  }

  /** A new customer whose only aliases are the given rail nodes (at least one). */
  async createRailOnly(manager: EntityManager, scope: TenantScope, nodes: [AliasNode, ...AliasNode[]]): Promise<string> {
    const customerId = await this.identity.createRailCustomer(scope, nodes[0], manager);
    for (const node of nodes.slice(1)) await this.identity.linkAliasIfAbsent(scope, customerId, node, manager);
    return customerId;
  }

  linkIfAbsent(manager: EntityManager, scope: TenantScope, node: AliasNode, customerId: string): Promise<boolean> {
    return this.identity.linkAliasIfAbsent(scope, customerId, node, manager);
  }

  /**
   * Moves a rail-only customer's rail aliases, subscription records and rail-derived
   * entitlements. Both customers' entitlement changes go to the change feed: the rail-only
   * customer's keys end (cause `revoke`: they left that customer), the named customer's start
   * or extend (cause `purchase`: the purchase is now theirs).
   */
  private async fold(manager: EntityManager, scope: TenantScope, railOnlyCustomerId: string, intoCustomerId: string): Promise<void> {
    const tracker = await this.changes.track(manager, scope, [railOnlyCustomerId, intoCustomerId]);
    await this.customers.moveRailAliases(manager, scope, railOnlyCustomerId, intoCustomerId);
    await this.subscriptions.reassignCustomer(scope, railOnlyCustomerId, intoCustomerId, this.clock.now(), manager);
    await this.revenue.reassigned(manager, scope, railOnlyCustomerId, intoCustomerId);
    await this.writer.moveRailEntitlements(manager, scope, railOnlyCustomerId, intoCustomerId);
    await tracker.publish(manager, (_key, change) => (change === 'deactivated' ? 'revoke' : 'purchase'));
  }
}

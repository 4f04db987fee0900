import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { Clock, type TenantScope } from '#platform';
import { CUSTOMER_ID_PREFIX, newCustomerId } from '../domain/ids.js';
import { IdentityRepository } from './identity.repository.js';

/** One alias node of the graph (`ios_original_transaction_id`, `card_customer_id` …). */
export interface AliasNode {
  type: string;
  value: string;
}

/**
 * What the purchase rails need of the alias graph, inside their own transaction: rail ids
 * are alias nodes of a customer. Never merges customers. A node still held by a forgotten
 * customer is released before it is linked again (as identify does).
 */
@Injectable()
export class RailIdentity {
  constructor(
    private readonly repository: IdentityRepository,
    private readonly clock: Clock,
  ) {}

  /** The active customer of a node, or null (unknown, or its customer is forgotten). */
  findCustomerByAlias(scope: TenantScope, node: AliasNode, manager: EntityManager): Promise<string | null> {
    return this.repository.findCustomerIdByAlias(scope, node.type, node.value, {}, manager);
  }

  /** Whether `customerId` names an active (not forgotten) customer of the scope. */
  async isActiveCustomer(scope: TenantScope, customerId: string, manager: EntityManager): Promise<boolean> {
    if (!customerId.startsWith(CUSTOMER_ID_PREFIX)) return false;
    return (await this.repository.findCustomerById(scope, customerId, {}, manager)) !== null;
  }

  /**
   * Creates a rail-only customer whose only alias is `node`. A concurrent creation for the
   * same node surfaces as a unique violation (23505): run the caller's transaction with
   * `inTransactionWithRetry`, the retry then finds the winner's customer.
   */
  async createRailCustomer(scope: TenantScope, node: AliasNode, manager: EntityManager): Promise<string> {
    const now = this.clock.now();
    await this.releaseIfForgotten(scope, node, manager);
    const customerId = newCustomerId();
    await this.repository.insertCustomer(scope, customerId, now, manager);
    await this.repository.insertAlias(scope, node, customerId, 'self_asserted', now, manager);
    return customerId;
  }

  /** Links `node` to `customerId` unless it is already linked (to anyone); returns whether this call linked it. */
  async linkAliasIfAbsent(scope: TenantScope, customerId: string, node: AliasNode, manager: EntityManager): Promise<boolean> {
    await this.releaseIfForgotten(scope, node, manager);
    return this.repository.insertAliasIfAbsent(scope, node, customerId, 'self_asserted', this.clock.now(), manager);
  }

  private async releaseIfForgotten(scope: TenantScope, node: AliasNode, manager: EntityManager): Promise<void> {
    const hits = await this.repository.findAliases(scope, [node], manager);
    if (hits.some((hit) => hit.forgotten)) await this.repository.releaseForgottenAliases(scope, hits, manager);
  }
}

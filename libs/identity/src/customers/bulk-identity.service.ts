import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { TenantScope } from '#platform';
import { newCustomerId } from '../domain/ids.js';
import type { Traits } from '../domain/traits.js';
import { type BulkAliasHit, type BulkCustomerRow, BulkIdentityRepository } from './bulk-identity.repository.js';

export type { BulkAliasHit, BulkCustomerRow };

/**
 * The alias graph for bulk callers (user migration), inside the caller's transaction, one
 * statement per step. Never merges customers: the caller decides, per row, which customer a
 * node belongs to; a node linked concurrently by someone else fails the transaction with a
 * unique violation (23505), which `inTransactionWithRetry` starts over. The leading `_manager`
 * is ignored: every statement joins the caller's ambient transaction.
 */
@Injectable()
export class BulkIdentity {
  constructor(private readonly repository: BulkIdentityRepository) {}

  /** A fresh `cdcust_` id (the caller inserts it with `createCustomers`). */
  newCustomerId(): string {
    return newCustomerId();
  }

  findAliases(_manager: EntityManager, scope: TenantScope, nodes: readonly { type: string; value: string }[]): Promise<BulkAliasHit[]> {
    return this.repository.findAliases(scope, nodes);
  }

  aliasesOfCustomers(
    _manager: EntityManager,
    scope: TenantScope,
    customerIds: readonly string[],
    types: readonly string[],
  ): Promise<{ customerId: string; type: string; value: string }[]> {
    return this.repository.aliasesOfCustomers(scope, customerIds, types);
  }

  lockCustomers(_manager: EntityManager, scope: TenantScope, customerIds: readonly string[]): Promise<BulkCustomerRow[]> {
    return this.repository.lockCustomers(scope, customerIds);
  }

  releaseForgottenAliases(_manager: EntityManager, scope: TenantScope, hits: readonly BulkAliasHit[]): Promise<void> {
    return this.repository.releaseForgottenAliases(scope, hits);
  }

  createCustomers(
    _manager: EntityManager,
    scope: TenantScope,
    customers: readonly { customerId: string; email: string | null; traits: Traits }[],
    at: Date,
  ): Promise<void> {
    return this.repository.insertCustomers(scope, customers, at);
  }

  linkAliases(_manager: EntityManager, scope: TenantScope, links: readonly { type: string; value: string; customerId: string }[], at: Date): Promise<void> {
    return this.repository.insertAliases(scope, links, at);
  }

  updateProfiles(
    _manager: EntityManager,
    scope: TenantScope,
    profiles: readonly { customerId: string; email: string | null; traits: Traits }[],
    at: Date,
  ): Promise<void> {
    return this.repository.updateProfiles(scope, profiles, at);
  }
}

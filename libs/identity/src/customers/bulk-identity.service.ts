import { Injectable } from '@nestjs/common';
import type { TenantScope } from '#platform';
import { newCustomerId } from '../domain/ids.js';
import type { Traits } from '../domain/traits.js';
import { type BulkAliasHit, type BulkCustomerRow, BulkIdentityRepository } from './bulk-identity.repository.js';

export type { BulkAliasHit, BulkCustomerRow };

/**
 * The alias graph for bulk callers (user migration), inside the caller's transaction, one
 * statement per step. Never merges customers: the caller decides, per row, which customer a
 * node belongs to; a node linked concurrently by someone else fails the transaction with a
 * unique violation (23505), which a retrying transaction (`sql.transaction(work, { retry: true })`) starts over.
 */
@Injectable()
export class BulkIdentity {
  constructor(private readonly repository: BulkIdentityRepository) {}

  /** A fresh `cdcust_` id (the caller inserts it with `createCustomers`). */
  newCustomerId(): string {
    return newCustomerId();
  }

  findAliases(scope: TenantScope, nodes: readonly { type: string; value: string }[]): Promise<BulkAliasHit[]> {
    return this.repository.findAliases(scope, nodes);
  }

  aliasesOfCustomers(
    scope: TenantScope,
    customerIds: readonly string[],
    types: readonly string[],
  ): Promise<{ customerId: string; type: string; value: string }[]> {
    return this.repository.aliasesOfCustomers(scope, customerIds, types);
  }

  lockCustomers(scope: TenantScope, customerIds: readonly string[]): Promise<BulkCustomerRow[]> {
    return this.repository.lockCustomers(scope, customerIds);
  }

  releaseForgottenAliases(scope: TenantScope, hits: readonly BulkAliasHit[]): Promise<void> {
    return this.repository.releaseForgottenAliases(scope, hits);
  }

  createCustomers(scope: TenantScope, customers: readonly { customerId: string; email: string | null; traits: Traits }[], at: Date): Promise<void> {
    return this.repository.insertCustomers(scope, customers, at);
  }

  linkAliases(scope: TenantScope, links: readonly { type: string; value: string; customerId: string }[], at: Date): Promise<void> {
    return this.repository.insertAliases(scope, links, at);
  }

  updateProfiles(scope: TenantScope, profiles: readonly { customerId: string; email: string | null; traits: Traits }[], at: Date): Promise<void> {
    return this.repository.updateProfiles(scope, profiles, at);
  }
}

import { Injectable } from '@nestjs/common';
import type { TenantScope } from '#platform';
import { ALIAS_TYPES } from '../domain/identifier-rules.js';
import { CUSTOMER_ID_PREFIX } from '../domain/ids.js';
import { type CustomerProfile, IdentityRepository } from './identity.repository.js';

export interface CustomerHint {
  customerId?: string;
  userId?: string;
  anonymousId?: string;
}

/**
 * Read side of identity for other contexts. Lookups stay inside the scope; forgotten
 * customers read as unknown everywhere.
 */
@Injectable()
export class CustomerDirectory {
  constructor(private readonly repository: IdentityRepository) {}

  /** The first hint that names a known, active customer (customerId, then userId, then anonymousId); null otherwise. */
  async findCustomerId(scope: TenantScope, hint: CustomerHint): Promise<string | null> {
    if (hint.customerId && (await this.isActiveCustomer(scope, hint.customerId))) return hint.customerId;
    if (hint.userId) {
      const found = await this.repository.findCustomerIdByAlias(scope, ALIAS_TYPES.developer, hint.userId);
      if (found) return found;
    }
    if (hint.anonymousId) {
      const found = await this.repository.findCustomerIdByAlias(scope, ALIAS_TYPES.anonymous, hint.anonymousId);
      if (found) return found;
    }
    return null;
  }

  /** Customer of any alias node (e.g. `ios_app_account_token`, a rail customer id); null when unknown or forgotten. */
  findCustomerIdByAlias(scope: TenantScope, type: string, value: string): Promise<string | null> {
    return this.repository.findCustomerIdByAlias(scope, type, value);
  }

  /** Whether `customerId` names an active (not forgotten) customer of the scope: the one test of a `cdcust_` id. */
  async isActiveCustomer(scope: TenantScope, customerId: string): Promise<boolean> {
    if (!customerId.startsWith(CUSTOMER_ID_PREFIX)) return false;
    return (await this.repository.findCustomerById(scope, customerId)) !== null;
  }

  /**
   * Email, first name and developer user ids of an active customer (null when unknown or
   * forgotten), in the caller's transaction when one is open.
   */
  profile(scope: TenantScope, customerId: string): Promise<CustomerProfile | null> {
    return this.repository.profile(scope, customerId);
  }

  /** The profiles of the active customers among `customerIds` in one statement, by customer id (unknown and forgotten ones absent). */
  profiles(scope: TenantScope, customerIds: readonly string[]): Promise<Map<string, CustomerProfile>> {
    return this.repository.profiles(scope, customerIds);
  }
}

import { Injectable } from '@nestjs/common';
import { ApiError } from '#platform';
import type { AuthContext } from '#keys';
import { CustomerDirectory } from '#identity';
import { CUSTOMER_ID_PREFIX } from '#identity';
import type { EntitlementList } from '../domain/public-entitlement.js';
import { EntitlementReadService } from './entitlement-read.service.js';

export interface CustomerHints {
  customerId?: string;
  userId?: string;
  anonymousId?: string;
}

/** The use cases behind GET /v1/entitlements and GET /v1/server/customers/{id}/entitlements. */
@Injectable()
export class EntitlementQueries {
  constructor(
    private readonly reads: EntitlementReadService,
    private readonly customers: CustomerDirectory,
  ) {}

  /** Public read (either key kind): exactly one hint; an unknown or forgotten customer is an empty list. */
  async publicRead(auth: AuthContext, hints: CustomerHints): Promise<EntitlementList> {
    const given = (['customerId', 'userId', 'anonymousId'] as const).filter((name) => hints[name] !== undefined && hints[name] !== '');
    if (given.length === 0) {
      throw ApiError.invalidRequest('missing_customer', 'One customer hint is required: customerId, userId or anonymousId');
    }
    if (given.length > 1) {
      throw ApiError.invalidParam(`Exactly one customer hint is allowed; got ${given.join(', ')}`);
    }
    const hint = given[0];
    // Either key kind may name a customerId: a cdcust_ id is unguessable and is what
    // identify handed the calling client; the lookup stays inside the key's project and env.
    if (hint === 'customerId') assertCustomerIdFormat(hints.customerId!);
    const customerId = await this.customers.findCustomerId(auth, { [hint]: hints[hint] });
    if (!customerId) return { object: 'list', data: [], serviceCustomerId: '', env: auth.env };
    return { object: 'list', data: await this.reads.listActive(auth, customerId), serviceCustomerId: customerId, env: auth.env };
  }

  /** Server read: any customer of the key's project and environment; unknown is 400 invalid_customer. */
  async serverRead(auth: AuthContext, customerId: string): Promise<EntitlementList> {
    assertCustomerIdFormat(customerId);
    if (!(await this.customers.isActiveCustomer(auth, customerId))) throw unknownCustomer(customerId);
    return { object: 'list', data: await this.reads.listActive(auth, customerId), serviceCustomerId: customerId, env: auth.env };
  }
}

export function assertCustomerIdFormat(customerId: string): void {
  if (!customerId.startsWith(CUSTOMER_ID_PREFIX)) {
    throw ApiError.invalidRequest('invalid_customer', `customerId must start with ${CUSTOMER_ID_PREFIX}`);
  }
}

export function unknownCustomer(customerId: string): ApiError {
  return ApiError.invalidRequest('invalid_customer', `No customer ${customerId} in this project and environment`);
}

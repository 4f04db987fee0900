import { Injectable } from '@nestjs/common';
import { ApiError } from '#platform';
import type { AuthContext } from '#keys';
import { CustomerDirectory } from '#identity';
import { CUSTOMER_ID_PREFIX } from '#identity';
import type { EntitlementList } from '../domain/public-entitlement.js';
import { EntitlementReadService } from './entitlement-read.service.js';

export interface CustomerHints {
  customerId?: string;
  /** The same id as customerId, under the name the responses carry. */
  serviceCustomerId?: string;
  /** The same id as customerId, under the public clients' name. */
  crossdeckCustomerId?: string;
  userId?: string;
  anonymousId?: string;
}

const CUSTOMER_ID_SPELLINGS = ['customerId', 'serviceCustomerId', 'crossdeckCustomerId'] as const;

/** The use cases behind GET /v1/entitlements and GET /v1/server/customers/{id}/entitlements. */
@Injectable()
export class EntitlementQueries {
  constructor(
    private readonly reads: EntitlementReadService,
    private readonly customers: CustomerDirectory,
  ) {}

  /**
   * The customer one hint names, for the public reads (either key kind). A customer id (under
   * any of its spellings) wins over the other hints; `userId` with `anonymousId` reads the
   * customer they resolve to, the `userId`'s when they differ (the `anonymousId`'s when the
   * `userId` is unknown). Null for an unknown or forgotten customer; no hint is
   * `400 missing_customer`, different customer ids `400 invalid_param_value`.
   */
  async customerOfHints(auth: AuthContext, hints: CustomerHints): Promise<string | null> {
    const present = (value: string | undefined): value is string => value !== undefined && value !== '';
    const idSpellings = CUSTOMER_ID_SPELLINGS.filter((name) => present(hints[name]));
    const ids = new Set(idSpellings.map((name) => hints[name]));
    if (ids.size > 1) throw ApiError.invalidParam(`${idSpellings.join(', ')} name different customers; send one customer id`);
    const userId = present(hints.userId) ? hints.userId : undefined;
    const anonymousId = present(hints.anonymousId) ? hints.anonymousId : undefined;
    let customerId: string | null;
    if (idSpellings.length > 0) {
      // Either key kind may name a customerId: a cdcust_ id is unguessable and is what
      // identify handed the calling client; the lookup stays inside the key's project and env.
      const named = hints[idSpellings[0]]!;
      assertCustomerIdFormat(named);
      customerId = await this.customers.findCustomerId(auth, { customerId: named });
    } else if (userId !== undefined || anonymousId !== undefined) {
      customerId = userId !== undefined ? await this.customers.findCustomerId(auth, { userId }) : null;
      if (!customerId && anonymousId !== undefined) customerId = await this.customers.findCustomerId(auth, { anonymousId });
    } else {
      throw ApiError.invalidRequest('missing_customer', 'One customer hint is required: customerId, userId or anonymousId');
    }
    return customerId;
  }

  /** Public read (either key kind): the customer of `customerOfHints`; an unknown or forgotten customer is an empty list. */
  async publicRead(auth: AuthContext, hints: CustomerHints): Promise<EntitlementList> {
    const customerId = await this.customerOfHints(auth, hints);
    if (!customerId) return { object: 'list', data: [], serviceCustomerId: '', crossdeckCustomerId: '', env: auth.env };
    return this.list(auth, customerId);
  }

  /** Server read: any customer of the key's project and environment; unknown is 400 invalid_customer. */
  async serverRead(auth: AuthContext, customerId: string): Promise<EntitlementList> {
    assertCustomerIdFormat(customerId);
    if (!(await this.customers.isActiveCustomer(auth, customerId))) throw unknownCustomer(customerId);
    return this.list(auth, customerId);
  }

  private async list(auth: AuthContext, customerId: string): Promise<EntitlementList> {
    return {
      object: 'list',
      data: await this.reads.listActive(auth, customerId),
      serviceCustomerId: customerId,
      crossdeckCustomerId: customerId,
      env: auth.env,
    };
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

import { Injectable } from '@nestjs/common';
import { ApiError, type TenantScope } from '#platform';
import { CUSTOMER_ID_PREFIX, CustomerDirectory } from '#identity';
import { EntitlementReadService } from '#entitlements';
import type { CustomerRefreshView } from './customer-refresh.view.js';
import { type RailReadOptions, RailReader } from './rail-reader.service.js';

/**
 * Refresh on demand (docs/rails.md, "Reading the rails"): reads every rail id linked to the
 * customer, applies what the rails hold, and answers the customer's entitlements afterwards
 * with what each read did. A rail that cannot be read is `unavailable`, never an error.
 */
@Injectable()
export class CustomerRefresh {
  constructor(
    private readonly customers: CustomerDirectory,
    private readonly reader: RailReader,
    private readonly reads: EntitlementReadService,
  ) {}

  /** `unknownCustomer`: the error of a customer the scope does not hold (the public and the operator API answer differently). */
  async refresh(scope: TenantScope, customerId: string, options: RailReadOptions, unknownCustomer: () => ApiError): Promise<CustomerRefreshView> {
    if (!customerId.startsWith(CUSTOMER_ID_PREFIX)) throw ApiError.invalidRequest('invalid_customer', `customerId must start with ${CUSTOMER_ID_PREFIX}`);
    if (!(await this.customers.isActiveCustomer(scope, customerId))) throw unknownCustomer();
    const results = await this.reader.readCustomer(scope, customerId, 'refresh', options);
    return {
      object: 'list',
      data: await this.reads.listActive(scope, customerId),
      serviceCustomerId: customerId,
      crossdeckCustomerId: customerId,
      env: scope.env,
      refreshed: results.map(({ rail, id, decision, auditEventId }) => ({ rail, id, decision, auditEventId })),
    };
  }
}

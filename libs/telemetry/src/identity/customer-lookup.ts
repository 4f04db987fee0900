import type { TenantScope } from '#platform';

/** What the resolver needs from the identity context (CustomerDirectory.findCustomerId). */
export interface CustomerLookup {
  findCustomerId(scope: TenantScope, hint: { customerId?: string; userId?: string; anonymousId?: string }): Promise<string | null>;
}

export const EVENT_CUSTOMER_LOOKUP = Symbol('EVENT_CUSTOMER_LOOKUP');

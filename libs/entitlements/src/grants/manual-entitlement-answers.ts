import { ApiError, type TenantScope } from '#platform';
import { unknownCustomer } from '../reads/entitlement-queries.service.js';
import { ManualEntitlementRefused } from './entitlement-change.js';

/**
 * The wire answers of a refused manual grant or revoke (the controllers' mapping; the use case
 * knows no HTTP). Anything else is rethrown as it is.
 */
export function publicRefusalAnswer(err: unknown, customerId: string): never {
  if (!(err instanceof ManualEntitlementRefused)) throw err;
  switch (err.refusal) {
    case 'malformed_customer_id':
      throw ApiError.invalidRequest('invalid_customer', err.message);
    case 'unknown_customer':
      throw unknownCustomer(customerId);
    case 'not_revocable':
      throw ApiError.invalidParam(err.message);
  }
}

/** The operator API names an unknown customer 404 resource_missing (a path it addressed). */
export function operatorRefusalAnswer(scope: TenantScope, customerId: string, err: unknown): never {
  if (!(err instanceof ManualEntitlementRefused)) throw err;
  if (err.refusal === 'not_revocable') throw ApiError.invalidParam(err.message);
  throw ApiError.resourceMissing(`No customer ${customerId} in this project's ${scope.env} environment`);
}

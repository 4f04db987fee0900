/*
 * A fixture that must NOT compile (test/unit/tenant-scope-types.spec.ts compiles it with the
 * project's compiler options). `.mts` keeps it out of `npm run typecheck` ("test/**\/*.ts").
 * Each line that must fail ends with `// error: TS<code>`; every other line must compile, so
 * a broken import or a renamed method fails the test instead of passing it vacuously.
 */
import { type TenantScope, TenantScopes, crossTenant } from '#platform';
// The repository's own file, not the context's index: fewer declarations to load, a faster check.
import type { RailSubscriptionsRepository } from '../../../libs/rails/src/model/rail-subscriptions.repository.js';

declare const repository: RailSubscriptionsRepository;
declare const request: { params: { projectId: string }; env: 'sandbox' | 'production' };

// 1. A repository call with a plain `{ projectId, env }` literal: the brand is missing.
export const plainLiteral = repository.listForCustomer({ projectId: 'proj_1', env: 'sandbox' }, 'cdcust_1'); // error: TS2345

// 2. A plain object typed as a scope: the brand is missing.
export const forged: TenantScope = { projectId: 'proj_1', env: 'sandbox' }; // error: TS2741

// 3. A service calling a repository without a scope.
export class UnscopedService {
  constructor(private readonly subscriptions: RailSubscriptionsRepository) {}

  list(customerId: string) {
    return this.subscriptions.listForCustomer(customerId, 'card_payments'); // error: TS2345
  }

  fromRequest(customerId: string) {
    const scope = { projectId: request.params.projectId, env: request.env };
    return this.subscriptions.find(scope, 'card_payments', customerId); // error: TS2345
  }
}

// The ways a scope is made compile (the positive controls).
export const operator = repository.listForCustomer(TenantScopes.operator('proj_1', 'sandbox'), 'cdcust_1');
export const scanned = repository.listForCustomer(crossTenant('fixture').scopeOf({ projectId: 'proj_1', env: 'production' }), 'cdcust_1');

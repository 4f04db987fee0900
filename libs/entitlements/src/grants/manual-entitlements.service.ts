import { Injectable } from '@nestjs/common';
import type { TenantScope } from '#platform';
import type { GrantDuration } from '../domain/entitlement-rules.js';
import type { EntitlementMutation } from '../domain/public-entitlement.js';
import type { MutationActor } from './entitlement-change.js';
import { EntitlementWriter } from './entitlement-writer.service.js';

export type { MutationActor } from './entitlement-change.js';

export interface GrantInput {
  entitlementKey: string;
  duration: GrantDuration;
  reason: string;
}

export interface RevokeInput {
  entitlementKey: string;
  reason: string;
}

/**
 * Manual grant and revoke (the server API and the console), each one change through the
 * writer: the manual row of (customer, key) is locked (or created by an INSERT that concurrent
 * inserts wait on), its state changes and the audit entry is appended in one transaction.
 * Concurrent calls on one entitlement run one after the other; each successful one leaves
 * exactly one audit entry, and the row's version counts them.
 */
@Injectable()
export class ManualEntitlementService {
  constructor(private readonly writer: EntitlementWriter) {}

  grant(scope: TenantScope, customerId: string, input: GrantInput, who: MutationActor): Promise<EntitlementMutation> {
    return this.writer.apply(scope, { kind: 'manual_grant', customerId, ...input, who });
  }

  revoke(scope: TenantScope, customerId: string, input: RevokeInput, who: MutationActor): Promise<EntitlementMutation> {
    return this.writer.apply(scope, { kind: 'manual_revoke', customerId, ...input, who });
  }
}

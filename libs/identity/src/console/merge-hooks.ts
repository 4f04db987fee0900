import { Injectable } from '@nestjs/common';
import type { TenantScope } from '#platform';

/** An approved merge: everything of `fromCustomerId` moves to `intoCustomerId`. */
export interface CustomerMerge {
  fromCustomerId: string;
  intoCustomerId: string;
}

export type MergeHook = (scope: TenantScope, merge: CustomerMerge) => Promise<void>;

/**
 * Other contexts register what they move when the operator approves a merge review (the
 * rails: subscription records and rail-derived entitlements). Every hook runs inside the
 * approval's transaction: a failing hook rolls the whole approval back.
 */
@Injectable()
export class MergeHooks {
  private readonly hooks = new Map<string, MergeHook>();

  register(name: string, hook: MergeHook): void {
    this.hooks.set(name, hook);
  }

  async runAll(scope: TenantScope, merge: CustomerMerge): Promise<void> {
    for (const hook of this.hooks.values()) await hook(scope, merge);
  }
}

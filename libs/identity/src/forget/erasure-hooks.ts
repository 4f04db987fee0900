import { Injectable } from '@nestjs/common';
import type { TenantScope } from '#platform';

/** The personal identifiers of an erased customer, as they were when it was forgotten. */
export interface ErasureSubject {
  customerId: string;
  userIds: string[];
  anonymousIds: string[];
  /**
   * True when only the listed anonymous devices are forgotten and the customer stays (an
   * anonymous-only request naming a device of an identified customer).
   */
  deviceOnly?: boolean;
}

export type ErasureHook = (scope: TenantScope, subject: ErasureSubject) => Promise<void>;

/**
 * Other contexts register what they must erase or anonymise for a forgotten customer
 * (telemetry hints, device bindings, ...). The retention worker calls every hook inside the
 * erasure's transaction: a failing hook rolls the erasure back and it is retried later.
 */
@Injectable()
export class ErasureHooks {
  private readonly hooks = new Map<string, ErasureHook>();

  register(name: string, hook: ErasureHook): void {
    this.hooks.set(name, hook);
  }

  async runAll(scope: TenantScope, subject: ErasureSubject): Promise<void> {
    for (const hook of this.hooks.values()) await hook(scope, subject);
  }

  get names(): string[] {
    return [...this.hooks.keys()];
  }
}

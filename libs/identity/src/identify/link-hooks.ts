import { Injectable } from '@nestjs/common';
import type { TenantScope } from '#platform';

/** An anonymous id linked to a customer by identify. */
export interface AnonymousLink {
  customerId: string;
  anonymousId: string;
  linkedAtMs: number;
}

export type LinkHook = (scope: TenantScope, link: AnonymousLink) => Promise<void>;

/**
 * Other contexts register what follows an anonymous id becoming a customer (acquisition
 * counts the signup under its first touch). Identify runs every hook inside its own
 * transaction: a failing hook rolls the link back and the call fails, never half-applied.
 */
@Injectable()
export class LinkHooks {
  private readonly hooks = new Map<string, LinkHook>();

  register(name: string, hook: LinkHook): void {
    this.hooks.set(name, hook);
  }

  async runAll(scope: TenantScope, link: AnonymousLink): Promise<void> {
    for (const hook of this.hooks.values()) await hook(scope, link);
  }
}

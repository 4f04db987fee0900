import { Injectable } from '@nestjs/common';
import type { TenantScope } from '#platform';

/** What another context (reporting's activity rollup) attaches to hear that a customer sent events. */
export interface CustomerActivitySink {
  /** `customerId` sent an event at `seenAtMs`, reported in the (ambient) transaction that resolved it. */
  active(scope: TenantScope, customerId: string, seenAtMs: number): Promise<void>;
}

/**
 * The port through which the event identity resolver reports each resolved hint set's
 * customer and last-seen time (a resolved set turns pending again with its next batch, so
 * every day with events is reported within a resolver run). Without a sink it costs nothing.
 */
@Injectable()
export class CustomerActivityFeed {
  private sink: CustomerActivitySink | null = null;

  attach(sink: CustomerActivitySink): void {
    this.sink = sink;
  }

  async active(scope: TenantScope, customerId: string, seenAtMs: number): Promise<void> {
    await this.sink?.active(scope, customerId, seenAtMs);
  }
}

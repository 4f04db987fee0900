import { Injectable } from '@nestjs/common';
import { Clock, type TenantScope } from '#platform';
import { utcDay } from './bucket-report.rules.js';
import { BucketReportsRepository } from './bucket-reports.repository.js';

/**
 * Read cost per actor from the bucket reports: the actor is the id the reporter attributes
 * reads to (the developer user id the client SDK identified; `anonymous` is overhead and
 * never an actor). `days` counts UTC dates back from today, today included.
 */
@Injectable()
export class ReadCosts {
  constructor(
    private readonly reports: BucketReportsRepository,
    private readonly clock: Clock,
  ) {}

  /** Reads of each named actor over the window; an actor without reports is absent. */
  async readsByActor(scope: TenantScope, actorIds: readonly string[], days: number): Promise<Map<string, number>> {
    if (actorIds.length === 0) return new Map();
    return this.reports.readsByActor(scope, actorIds, this.fromDate(days));
  }

  /** The actors with the most reads over the window, most first. */
  topActors(scope: TenantScope, days: number, limit: number): Promise<Array<{ actorId: string; reads: number }>> {
    return this.reports.topActors(scope, this.fromDate(days), limit);
  }

  /** The first UTC date of a window of `days` dates ending today. */
  fromDate(days: number): string {
    return utcDay(this.clock.nowMs(), Math.max(1, days) - 1);
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { APP_LOGGER, type AppLogger, Clock, OnJob, crossTenant } from '#platform';
import { DAILY_ROLLUP_TABLES, EventPartitionMaintenanceRepository, type PartitionSession } from './event-partition-maintenance.repository.js';
import { planPartitions } from './event-partitions.js';

const RUN_INTERVAL_MS = 60 * 60 * 1000;
const DEFAULT_PURGE_BATCH = 5_000;
const DROP_LOCK_TIMEOUT = '200ms';
const DROP_ATTEMPTS = 10;
const DROP_RETRY_PAUSE_MS = 1_000;
const LOCK_NOT_AVAILABLE = '55P03';

/** Partitions hold every tenant's events. */
const PARTITION_SCAN = crossTenant('event partition maintenance');

export interface MaintenanceSummary {
  created: string[];
  dropped: string[];
  purgedFromDefault: number;
  /** Hint sets (resolver queue) not seen within the retention. */
  purgedHintSets: number;
  /** Daily visitor rows (analytics rollup) of days past the retention. */
  purgedVisitorDays: number;
  /** Rows of the other per-day rollups (error days, host, page and referrer views) of days past the retention. */
  purgedRollupDays: number;
  /** False when another replica held the lock. */
  ran: boolean;
}

/**
 * Keeps the daily partitions of `events`: creates them a week ahead, drops those past
 * retention (90 days of client time), and purges the DEFAULT partition (clients with clocks
 * far off) by receive time, forgets hint sets (the resolver's queue) not seen within
 * the retention and every per-day rollup's rows of days past it (visitors, error days, host,
 * page and referrer views: the rollups are kept as long as the events they summarise). Rows of a new day that already sit in the default partition
 * are moved into the new table before it is attached. Hourly in-process
 * (at start too); not under NODE_ENV=test, where tests call runOnce().
 */
@Injectable()
export class EventPartitionMaintenance {
  constructor(
    private readonly repository: EventPartitionMaintenanceRepository,
    private readonly clock: Clock,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  /** A recurring durable job (hourly, first run at start), one replica at a time. */
  @OnJob({
    type: 'telemetry.maintain_event_partitions',
    everyMs: RUN_INTERVAL_MS,
    transaction: false,
    maxAttempts: 3,
    leaseMs: 15 * 60_000,
    backoff: { baseMs: 60_000 },
  })
  async maintainJob(): Promise<void> {
    const summary = await this.runOnce();
    if (
      summary.created.length +
        summary.dropped.length +
        summary.purgedFromDefault +
        summary.purgedHintSets +
        summary.purgedVisitorDays +
        summary.purgedRollupDays >
      0
    )
      this.logger.info({ ...summary }, 'event partitions maintained');
  }

  async runOnce(retentionDays?: number): Promise<MaintenanceSummary> {
    const summary = await this.repository.withMaintenanceLock(PARTITION_SCAN, (session) => this.maintain(session, retentionDays));
    return summary ?? { created: [], dropped: [], purgedFromDefault: 0, purgedHintSets: 0, purgedVisitorDays: 0, purgedRollupDays: 0, ran: false };
  }

  /** The partitions of `events` (names). */
  partitions(): Promise<string[]> {
    return this.repository.partitions(PARTITION_SCAN);
  }

  private async maintain(session: PartitionSession, retentionDays?: number): Promise<MaintenanceSummary> {
    const nowMs = this.clock.nowMs();
    const plan = planPartitions(nowMs, await session.partitions(), retentionDays);
    const summary: MaintenanceSummary = {
      created: [],
      dropped: [],
      purgedFromDefault: 0,
      purgedHintSets: 0,
      purgedVisitorDays: 0,
      purgedRollupDays: 0,
      ran: true,
    };
    for (const day of plan.create) {
      summary.created.push(await session.createPartition(day));
    }
    for (const name of plan.drop) {
      if (await this.dropPartition(session, name)) summary.dropped.push(name);
    }
    summary.purgedFromDefault = await this.inBatches((limit) => session.purgeDefaultBatch(plan.purgeDefaultBeforeMs, limit));
    summary.purgedHintSets = await this.inBatches((limit) => session.purgeHintSetsBatch(plan.purgeDefaultBeforeMs, limit));
    summary.purgedVisitorDays = await this.inBatches((limit) => session.purgeVisitorDaysBatch(plan.purgeDefaultBeforeMs, limit));
    for (const table of DAILY_ROLLUP_TABLES)
      summary.purgedRollupDays += await this.inBatches((limit) => session.purgeRollupDaysBatch(table, plan.purgeDefaultBeforeMs, limit));
    return summary;
  }

  /** Runs a batch of at most DEFAULT_PURGE_BATCH rows until one comes back short; returns the total. */
  private async inBatches(batch: (limit: number) => Promise<number>): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await batch(DEFAULT_PURGE_BATCH);
      total += n;
      if (n < DEFAULT_PURGE_BATCH) return total;
    }
  }

  /**
   * DROP takes ACCESS EXCLUSIVE on `events`: while it waits for in-flight inserts, every new
   * insert queues behind it. So it only ever waits briefly, and tries again a little later;
   * a partition still busy after the attempts is dropped by the next run.
   */
  private async dropPartition(session: PartitionSession, name: string): Promise<boolean> {
    for (let attempt = 1; attempt <= DROP_ATTEMPTS; attempt++) {
      try {
        await session.dropPartition(name, DROP_LOCK_TIMEOUT);
        return true;
      } catch (err) {
        if ((err as { code?: string }).code !== LOCK_NOT_AVAILABLE) throw err;
        await new Promise((resolve) => setTimeout(resolve, DROP_RETRY_PAUSE_MS));
      }
    }
    this.logger.warn({ partition: name, attempts: DROP_ATTEMPTS }, 'partition drop postponed: events table busy');
    return false;
  }
}

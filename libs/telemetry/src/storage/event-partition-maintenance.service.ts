import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { DataSource, type QueryRunner } from 'typeorm';
import { APP_LOGGER, type AppLogger, Clock, PeriodicJobs } from '../../../platform/src/index.js';
import { isoDay, partitionName, planPartitions } from './event-partitions.js';

const RUN_INTERVAL_MS = 60 * 60 * 1000;
// Any constant; the same for every replica. Only one replica maintains partitions at a time.
const MAINTENANCE_LOCK_KEY = 727_500;
const DEFAULT_PURGE_BATCH = 5_000;
const DROP_LOCK_TIMEOUT = '200ms';
const DROP_ATTEMPTS = 10;
const DROP_RETRY_PAUSE_MS = 1_000;
const LOCK_NOT_AVAILABLE = '55P03';

export interface MaintenanceSummary {
  created: string[];
  dropped: string[];
  purgedFromDefault: number;
  /** Hint sets (resolver queue) not seen within the retention. */
  purgedHintSets: number;
  /** False when another replica held the lock. */
  ran: boolean;
}

/**
 * Keeps the daily partitions of `events`: creates them a week ahead, drops those past
 * retention (90 days of client time), and purges the DEFAULT partition (clients with clocks
 * far off) by receive time, and forgets hint sets (the resolver's queue) not seen within
 * the retention. Rows of a new day that already sit in the default partition
 * are moved into the new table before it is attached. Hourly in-process
 * (at start too); not under NODE_ENV=test, where tests call runOnce().
 */
@Injectable()
export class EventPartitionMaintenance implements OnApplicationBootstrap {
  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    private readonly clock: Clock,
    private readonly jobs: PeriodicJobs,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  onApplicationBootstrap(): void {
    this.jobs.every('event partition maintenance', RUN_INTERVAL_MS, async () => {
      const summary = await this.runOnce();
      if (summary.created.length + summary.dropped.length + summary.purgedFromDefault + summary.purgedHintSets > 0) this.logger.info({ ...summary }, 'event partitions maintained');
    }, { runAtStart: true });
  }

  async runOnce(retentionDays?: number): Promise<MaintenanceSummary> {
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      const [{ locked }] = await runner.query(`SELECT pg_try_advisory_lock($1) AS locked`, [MAINTENANCE_LOCK_KEY]);
      if (!locked) return { created: [], dropped: [], purgedFromDefault: 0, purgedHintSets: 0, ran: false };
      try {
        return await this.maintain(runner, retentionDays);
      } finally {
        await runner.query(`SELECT pg_advisory_unlock($1)`, [MAINTENANCE_LOCK_KEY]);
      }
    } finally {
      await runner.release();
    }
  }

  /** The partitions of `events` (names). */
  async partitions(runner?: QueryRunner): Promise<string[]> {
    const rows: { name: string }[] = await (runner ?? this.dataSource).query(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'events'::regclass ORDER BY 1`,
    );
    return rows.map((r) => r.name);
  }

  private async maintain(runner: QueryRunner, retentionDays?: number): Promise<MaintenanceSummary> {
    const nowMs = this.clock.nowMs();
    const plan = planPartitions(nowMs, await this.partitions(runner), retentionDays);
    const summary: MaintenanceSummary = { created: [], dropped: [], purgedFromDefault: 0, purgedHintSets: 0, ran: true };
    for (const day of plan.create) {
      await this.inTransaction(runner, () => this.createPartition(runner, day));
      summary.created.push(partitionName(day));
    }
    for (const name of plan.drop) {
      if (await this.dropPartition(runner, name)) summary.dropped.push(name);
    }
    summary.purgedFromDefault = await this.deleteInBatches(
      runner,
      `DELETE FROM events_default WHERE ctid IN (SELECT ctid FROM events_default WHERE received_at_ms < $1 LIMIT ${DEFAULT_PURGE_BATCH})`,
      [plan.purgeDefaultBeforeMs],
    );
    summary.purgedHintSets = await this.deleteInBatches(
      runner,
      `DELETE FROM event_identity_hints WHERE id IN (SELECT id FROM event_identity_hints WHERE last_seen_ms < $1 LIMIT ${DEFAULT_PURGE_BATCH})`,
      [plan.purgeDefaultBeforeMs],
    );
    return summary;
  }

  /** Runs a DELETE limited to DEFAULT_PURGE_BATCH rows until a batch comes back short; returns the total. */
  private async deleteInBatches(runner: QueryRunner, deleteSql: string, params: unknown[]): Promise<number> {
    let total = 0;
    for (;;) {
      const [{ n }]: { n: number }[] = await runner.query(`WITH purged AS (${deleteSql} RETURNING 1) SELECT count(*)::int AS n FROM purged`, params);
      total += n;
      if (n < DEFAULT_PURGE_BATCH) return total;
    }
  }

  /**
   * DROP takes ACCESS EXCLUSIVE on `events`: while it waits for in-flight inserts, every new
   * insert queues behind it. So it only ever waits briefly, and tries again a little later;
   * a partition still busy after the attempts is dropped by the next run.
   */
  private async dropPartition(runner: QueryRunner, name: string): Promise<boolean> {
    for (let attempt = 1; attempt <= DROP_ATTEMPTS; attempt++) {
      try {
        await this.inTransaction(runner, () => runner.query(`DROP TABLE IF EXISTS ${name}`), DROP_LOCK_TIMEOUT);
        return true;
      } catch (err) {
        if ((err as { code?: string }).code !== LOCK_NOT_AVAILABLE) throw err;
        await new Promise((resolve) => setTimeout(resolve, DROP_RETRY_PAUSE_MS));
      }
    }
    this.logger.warn({ partition: name, attempts: DROP_ATTEMPTS }, 'partition drop postponed: events table busy');
    return false;
  }

  private async inTransaction(runner: QueryRunner, work: () => Promise<unknown>, lockTimeout = '5s'): Promise<void> {
    await runner.startTransaction();
    try {
      // DDL on a partitioned table briefly locks it: never queue behind long waits.
      await runner.query(`SET LOCAL lock_timeout = '${lockTimeout}'`);
      await work();
      await runner.commitTransaction();
    } catch (err) {
      await runner.rollbackTransaction();
      throw err;
    }
  }

  /**
   * Always CREATE + ATTACH: attaching locks the parent only in SHARE UPDATE EXCLUSIVE mode,
   * which running inserts do not conflict with (CREATE TABLE ... PARTITION OF would need
   * ACCESS EXCLUSIVE on it). Rows of that day already in the default partition move first.
   * The default partition is locked before the move (ATTACH locks it anyway, only later): an
   * insert of that day committed between the move and the ATTACH would make the ATTACH fail.
   */
  private async createPartition(runner: QueryRunner, day: number): Promise<void> {
    const name = partitionName(day);
    const from = isoDay(day);
    const to = isoDay(day + 1);
    await runner.query(`LOCK TABLE events_default IN ACCESS EXCLUSIVE MODE`);
    await runner.query(`CREATE TABLE ${name} (LIKE events INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
    await runner.query(
      `WITH moved AS (DELETE FROM events_default WHERE client_day >= $1::date AND client_day < $2::date RETURNING *)
       INSERT INTO ${name} SELECT * FROM moved`,
      [from, to],
    );
    await runner.query(`ALTER TABLE events ATTACH PARTITION ${name} FOR VALUES FROM ('${from}') TO ('${to}')`);
  }
}

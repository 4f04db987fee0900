import { Inject, Injectable } from '@nestjs/common';
import { DataSource, type QueryRunner } from 'typeorm';
import { ADVISORY_LOCKS, type CrossTenant, Sql } from '#platform';
import { isoDay, partitionName } from './event-partitions.js';

/**
 * The per-day rollups other than the visitor days, whose days past the event retention the
 * maintenance deletes. The visitors' last days and their per-day counts go together: a read
 * never reaches a day past the retention, so dropping both keeps its counts exact.
 */
export const DAILY_ROLLUP_TABLES = [
  'error_daily_rollups',
  'analytics_daily_hosts',
  'analytics_daily_pages',
  'analytics_daily_referrers',
  'analytics_visitor_last_days',
  'analytics_visitor_day_counts',
] as const;
export type DailyRollupTable = (typeof DAILY_ROLLUP_TABLES)[number];

const PARTITIONS_SQL = `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'events'::regclass ORDER BY 1`;

/**
 * One maintenance run's connection, holding the session advisory lock. Its statements are the
 * partition DDL and the batched purges; each DDL runs in its own short transaction with a
 * lock timeout (DDL on a partitioned table briefly locks it: never queue behind long waits).
 */
export class PartitionSession {
  constructor(private readonly runner: QueryRunner) {}

  /** The partitions of `events` (names). */
  async partitions(): Promise<string[]> {
    const rows: { name: string }[] = await this.runner.query(PARTITIONS_SQL);
    return rows.map((r) => r.name);
  }

  /**
   * Always CREATE + ATTACH: attaching locks the parent only in SHARE UPDATE EXCLUSIVE mode,
   * which running inserts do not conflict with (CREATE TABLE ... PARTITION OF would need
   * ACCESS EXCLUSIVE on it). Rows of that day already in the default partition move first.
   * The default partition is locked before the move (ATTACH locks it anyway, only later): an
   * insert of that day committed between the move and the ATTACH would make the ATTACH fail.
   */
  async createPartition(day: number): Promise<string> {
    const name = partitionName(day);
    const from = isoDay(day);
    const to = isoDay(day + 1);
    await this.inTransaction(async () => {
      await this.runner.query(`LOCK TABLE events_default IN ACCESS EXCLUSIVE MODE`);
      await this.runner.query(`CREATE TABLE ${name} (LIKE events INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
      await this.runner.query(
        `WITH moved AS (DELETE FROM events_default WHERE client_day >= $1::date AND client_day < $2::date RETURNING *)
         INSERT INTO ${name} SELECT * FROM moved`,
        [from, to],
      );
      await this.runner.query(`ALTER TABLE events ATTACH PARTITION ${name} FOR VALUES FROM ('${from}') TO ('${to}')`);
    });
    return name;
  }

  /** DROP takes ACCESS EXCLUSIVE on `events`; waits at most `lockTimeout` (then fails with 55P03). */
  async dropPartition(name: string, lockTimeout: string): Promise<void> {
    await this.inTransaction(() => this.runner.query(`DROP TABLE IF EXISTS ${name}`), lockTimeout);
  }

  /** Deletes at most `limit` rows of the default partition received before `beforeMs`; returns how many. */
  purgeDefaultBatch(beforeMs: number, limit: number): Promise<number> {
    return this.countDeleted(`DELETE FROM events_default WHERE ctid IN (SELECT ctid FROM events_default WHERE received_at_ms < $1 LIMIT ${limit})`, [beforeMs]);
  }

  /** Deletes at most `limit` hint sets (the resolver's queue) not seen since `beforeMs`; returns how many. */
  purgeHintSetsBatch(beforeMs: number, limit: number): Promise<number> {
    return this.countDeleted(`DELETE FROM event_identity_hints WHERE id IN (SELECT id FROM event_identity_hints WHERE last_seen_ms < $1 LIMIT ${limit})`, [
      beforeMs,
    ]);
  }

  /**
   * Deletes at most `limit` daily visitor rows (the distinct-visitor rollup, the only rollup
   * that grows with visitors) of days before `beforeMs`; returns how many. Reads reach 90
   * days back.
   */
  purgeVisitorDaysBatch(beforeMs: number, limit: number): Promise<number> {
    return this.purgeDaysBatch('analytics_daily_visitors', beforeMs, limit);
  }

  /**
   * Deletes at most `limit` rows of one of the other per-day rollups (error days, host, page
   * and referrer views) of days before `beforeMs`; returns how many. These tables have no
   * index on the day alone (ingestion would maintain it on every batch): the delete scans
   * the table, which holds one row per key and day, not one per event, and the hourly run
   * has one day to remove, so a run is one or two scans per table.
   */
  purgeRollupDaysBatch(table: DailyRollupTable, beforeMs: number, limit: number): Promise<number> {
    if (!DAILY_ROLLUP_TABLES.includes(table)) throw new Error(`not a daily rollup table: ${table}`);
    return this.purgeDaysBatch(table, beforeMs, limit);
  }

  private purgeDaysBatch(table: string, beforeMs: number, limit: number): Promise<number> {
    return this.countDeleted(
      `DELETE FROM ${table} WHERE ctid IN (SELECT ctid FROM ${table} WHERE day < (to_timestamp($1 / 1000.0) AT TIME ZONE 'UTC')::date LIMIT ${limit})`,
      [beforeMs],
    );
  }

  private async countDeleted(deleteSql: string, params: unknown[]): Promise<number> {
    const [{ n }]: { n: number }[] = await this.runner.query(`WITH purged AS (${deleteSql} RETURNING 1) SELECT count(*)::int AS n FROM purged`, params);
    return n;
  }

  private async inTransaction(work: () => Promise<unknown>, lockTimeout = '5s'): Promise<void> {
    await this.runner.startTransaction();
    try {
      await this.runner.query(`SET LOCAL lock_timeout = '${lockTimeout}'`);
      await work();
      await this.runner.commitTransaction();
    } catch (err) {
      await this.runner.rollbackTransaction();
      throw err;
    }
  }
}

/**
 * The partitions of `events` and their maintenance: a documented cross-tenant operation
 * (partitions hold every tenant's events). DDL cannot join the ambient transaction, so a run
 * holds its own connection.
 */
@Injectable()
export class EventPartitionMaintenanceRepository {
  constructor(
    private readonly sql: Sql,
    @Inject(DataSource) private readonly dataSource: DataSource,
  ) {}

  /** The partitions of `events` (names). */
  async partitions(_scan: CrossTenant): Promise<string[]> {
    const rows = await this.sql.rows<{ name: string }>(PARTITIONS_SQL);
    return rows.map((r) => r.name);
  }

  /**
   * Runs `work` on one connection holding the maintenance advisory lock (one replica at a
   * time); `null` without running it when another replica holds the lock.
   */
  async withMaintenanceLock<T>(_scan: CrossTenant, work: (session: PartitionSession) => Promise<T>): Promise<T | null> {
    // A dedicated connection: the session advisory lock and the DDL's own transactions need one connection for the whole run.
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      const [{ locked }] = await runner.query(`SELECT pg_try_advisory_lock($1) AS locked`, [ADVISORY_LOCKS.eventPartitionMaintenance]);
      if (!locked) return null;
      try {
        return await work(new PartitionSession(runner));
      } finally {
        await runner.query(`SELECT pg_advisory_unlock($1)`, [ADVISORY_LOCKS.eventPartitionMaintenance]);
      }
    } finally {
      await runner.release();
    }
  }
}

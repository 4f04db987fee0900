import { Inject, Injectable, Optional } from '@nestjs/common';
import { APP_CONFIG, type AppConfig, Metrics, Sql, type TenantScope, prepared } from '#platform';
import {
  type EncodedRows,
  FIRST_DELIVERY_EVENTS_SQL,
  FIRST_DELIVERY_EVENTS_WITHOUT_ROLLUPS_SQL,
  FIRST_DELIVERY_EVENTS_WITH_ISSUES_SQL,
  INSERT_EVENTS_SQL,
  INSERT_EVENTS_WITHOUT_ROLLUPS_SQL,
  INSERT_EVENTS_WITH_ISSUES_SQL,
  insertStatementOf,
} from './event-insert.sql.js';
import { type BatchWriteMeta, GroupCommit, type WriteUnit } from './group-commit.js';

export type { BatchWriteMeta } from './group-commit.js';

/** At most this many batches, and rows, go into one statement. */
const MERGE_BATCHES = 50;
const MERGE_ROWS = 5000;
/**
 * A second write slot opens once the running statement has taken this long. A statement of
 * a few batches takes a few milliseconds; one slot at a time gives the largest groups (on the
 * bench machine about a tenth less PostgreSQL CPU per batch than two, docs/performance.md),
 * and a statement held on a lock does not hold the replica's ingestion with it.
 */
const SPARE_SLOT_AFTER_MS = 25;

/** The statement texts, each prepared once per connection (unless DB_PREPARED_STATEMENTS=false). */
const PREPARED_INSERTS = new Map(
  [
    FIRST_DELIVERY_EVENTS_SQL,
    FIRST_DELIVERY_EVENTS_WITH_ISSUES_SQL,
    FIRST_DELIVERY_EVENTS_WITHOUT_ROLLUPS_SQL,
    INSERT_EVENTS_SQL,
    INSERT_EVENTS_WITH_ISSUES_SQL,
    INSERT_EVENTS_WITHOUT_ROLLUPS_SQL,
  ].map((sql) => [sql, prepared(sql)]),
);

/** Writes event batches with one statement each, merged with the batches that wait beside them (group commit). */
@Injectable()
export class EventsRepository {
  private readonly commits: GroupCommit;
  private readonly rollups: boolean;

  constructor(
    private readonly sql: Sql,
    @Inject(APP_CONFIG) config: AppConfig,
    @Optional() @Inject(Metrics) metrics?: Metrics | null,
  ) {
    this.rollups = config.eventRollups;
    this.commits = new GroupCommit(
      { slots: config.eventsWriteSlots, spareAfterMs: SPARE_SLOT_AFTER_MS, maxUnits: MERGE_BATCHES, maxRows: MERGE_ROWS },
      // A statement carries the batches of several requests: it never joins one caller's transaction.
      (unit) => this.sql.detached(() => this.writeNow(unit)),
      (batches) => metrics?.eventsBatchesPerStatement.observe(batches),
    );
  }

  /**
   * Upserts a batch (and its error issues) encoded by encodeBatch, or an events buffer's batch,
   * each row with its receive time; resolves after its commit with the rows written.
   */
  async writeEncoded(scope: TenantScope, meta: BatchWriteMeta, rows: EncodedRows): Promise<number> {
    if (rows.rowCount === 0) return 0;
    await this.commits.submit({ scope, meta, rows });
    return rows.rowCount;
  }

  /** Rows of new events go in with a plain INSERT; when one of them is already stored (a retry), the whole statement runs again as the upsert. */
  private async writeNow({ scope, meta, rows }: WriteUnit): Promise<void> {
    const statementMeta = { projectId: scope.projectId, env: scope.env, ...meta };
    const first = insertStatementOf(statementMeta, rows, { firstDelivery: true, rollups: this.rollups });
    try {
      await this.queryRetryingDeadlock(first.sql, first.params);
    } catch (err) {
      if ((err as { code?: string }).code !== UNIQUE_VIOLATION) throw err;
      const upsert = insertStatementOf(statementMeta, rows, { rollups: this.rollups });
      await this.queryRetryingDeadlock(upsert.sql, upsert.params);
    }
  }

  /**
   * The statement is idempotent (an upsert by event id), so a deadlock victim is simply run
   * again once: rare lock-order crossings with erasure or the resolver must not lose a batch.
   */
  private async queryRetryingDeadlock(sql: string, params: unknown[]): Promise<void> {
    const statement = PREPARED_INSERTS.get(sql) ?? sql;
    try {
      await this.sql.run(statement, params);
    } catch (err) {
      if ((err as { code?: string }).code !== DEADLOCK_DETECTED) throw err;
      await this.sql.run(statement, params);
    }
  }
}

const DEADLOCK_DETECTED = '40P01';
const UNIQUE_VIOLATION = '23505';

import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig, type TenantScope } from '../../../platform/src/index.js';
import { type EncodedRows, type EventRow, dedupeAndSort, encodeRows, insertStatementOf } from './event-insert.sql.js';
import { WriteGate, ingestWriteConcurrency } from './write-gate.js';

export interface BatchWriteMeta {
  appId: string;
  receivedAtMs: number;
  sdkName: string | null;
  sdkVersion: string | null;
}

/** Writes event batches: one statement per batch, through a bounded share of the pool. */
@Injectable()
export class EventsRepository {
  private readonly gate: WriteGate;

  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.gate = new WriteGate(ingestWriteConcurrency(config.dbPoolSize));
  }

  /** Upserts the batch (and its error issues) in one statement; returns the rows written. */
  async writeBatch(scope: TenantScope, meta: BatchWriteMeta, events: readonly EventRow[]): Promise<number> {
    if (events.length === 0) return 0;
    return this.writeEncoded(scope, meta, encodeRows(dedupeAndSort(events)));
  }

  /** The same statement for rows already encoded (the events buffer's merged batches); returns the rows written. */
  async writeEncoded(scope: TenantScope, meta: BatchWriteMeta, rows: EncodedRows): Promise<number> {
    const statement = insertStatementOf({ projectId: scope.projectId, env: scope.env, ...meta }, rows);
    await this.gate.run(() => this.queryRetryingDeadlock(statement.sql, statement.params));
    return rows.rowCount;
  }

  /**
   * The statement is idempotent (an upsert by event id), so a deadlock victim is simply run
   * again once: rare lock-order crossings with erasure or the resolver must not lose a batch.
   */
  private async queryRetryingDeadlock(sql: string, params: unknown[]): Promise<unknown> {
    try {
      return await this.dataSource.query(sql, params);
    } catch (err) {
      if ((err as { code?: string }).code !== DEADLOCK_DETECTED) throw err;
      return this.dataSource.query(sql, params);
    }
  }
}

const DEADLOCK_DETECTED = '40P01';

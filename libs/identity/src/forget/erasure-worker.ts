import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { APP_LOGGER, type AppLogger, Clock, PeriodicJobs, type Env, type TenantScope } from '../../../platform/src/index.js';
import { PERSONAL_ALIAS_TYPES } from '../domain/identifier-rules.js';
import { ErasureHooks, type ErasureSubject } from './erasure-hooks.js';

/** The erasure SLA of the spec; the worker erases on its next run, long before it. */
export const ERASURE_SLA_DAYS = 30;
const RUN_INTERVAL_MS = 60_000;
const SLA_WARNING_DAYS = 25;

interface ClaimedErasure {
  project_id: string;
  env: Env;
  customer_id: string;
  subject: { userIds?: string[]; anonymousIds?: string[] } | null;
  queued_at: Date;
}

/**
 * Retention worker: erases every queued customer on its next run (every minute; under
 * NODE_ENV=test only when runOnce() is called). Personal data is deleted or irreversibly
 * anonymised: developer and anonymous alias nodes, email, first name, traits, merge reviews;
 * the registered ErasureHooks erase the rest (device bindings, telemetry hints). The customer
 * row (id only) and payment-rail records and rail alias nodes are kept (financial-record law).
 * Several replicas: each erasure is claimed with FOR UPDATE SKIP LOCKED in its own transaction.
 */
@Injectable()
export class ErasureWorker implements OnApplicationBootstrap {
  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    private readonly hooks: ErasureHooks,
    private readonly clock: Clock,
    private readonly jobs: PeriodicJobs,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  onApplicationBootstrap(): void {
    this.jobs.every('erasure worker', RUN_INTERVAL_MS, async () => {
      await this.runOnce();
    });
  }

  /**
   * Erases every queued customer not claimed by another replica (only `projectId`'s when
   * given: an operator re-run, or a test that shares its database); returns how many.
   */
  async runOnce(options: { projectId?: string } = {}): Promise<number> {
    const failed: string[] = [];
    let erased = 0;
    for (;;) {
      let claimed: ClaimedErasure | null = null;
      try {
        claimed = await this.dataSource.transaction(async (manager) => {
          const rows: ClaimedErasure[] = await manager.query(
            `SELECT project_id, env, customer_id, subject, queued_at
               FROM erasures
              WHERE status = 'queued' AND customer_id <> ALL($1::text[]) AND ($2::text IS NULL OR project_id = $2)
              ORDER BY queued_at
              LIMIT 1
              FOR UPDATE SKIP LOCKED`,
            [failed, options.projectId ?? null],
          );
          const row = rows[0];
          if (!row) return null;
          await this.erase(row, manager);
          return row;
        });
      } catch (err) {
        const failedRow = (err as { erasure?: ClaimedErasure }).erasure;
        if (!failedRow) throw err;
        failed.push(failedRow.customer_id);
        await this.recordFailure(failedRow, err as Error);
        continue;
      }
      if (!claimed) break;
      erased += 1;
    }
    return erased;
  }

  private async erase(row: ClaimedErasure, manager: EntityManager): Promise<void> {
    const scope: TenantScope = { projectId: row.project_id, env: row.env };
    const now = this.clock.now();
    try {
      const current: { type: string; value: string }[] = await manager.query(
        `SELECT type, value FROM customer_aliases WHERE project_id = $1 AND env = $2 AND customer_id = $3 AND type = ANY($4::text[])`,
        [scope.projectId, scope.env, row.customer_id, PERSONAL_ALIAS_TYPES],
      );
      const subject: ErasureSubject = {
        customerId: row.customer_id,
        userIds: unique([...(row.subject?.userIds ?? []), ...current.filter((a) => a.type === 'developer').map((a) => a.value)]),
        anonymousIds: unique([...(row.subject?.anonymousIds ?? []), ...current.filter((a) => a.type === 'anonymous').map((a) => a.value)]),
      };
      await this.hooks.runAll(scope, subject, manager);
      await manager.query(`DELETE FROM customer_aliases WHERE project_id = $1 AND env = $2 AND customer_id = $3 AND type = ANY($4::text[])`, [
        scope.projectId,
        scope.env,
        row.customer_id,
        PERSONAL_ALIAS_TYPES,
      ]);
      await manager.query(
        `DELETE FROM merge_reviews WHERE project_id = $1 AND env = $2 AND (canonical_customer_id = $3 OR other_customer_id = $3)`,
        [scope.projectId, scope.env, row.customer_id],
      );
      await manager.query(
        `UPDATE customers SET email = NULL, first_name = NULL, traits = '{}'::jsonb, updated_at = $4
          WHERE project_id = $1 AND env = $2 AND id = $3`,
        [scope.projectId, scope.env, row.customer_id, now],
      );
      await manager.query(
        `UPDATE erasures SET status = 'deleted', deleted_at = $4, subject = NULL, last_error = NULL
          WHERE project_id = $1 AND env = $2 AND customer_id = $3`,
        [scope.projectId, scope.env, row.customer_id, now],
      );
    } catch (err) {
      throw Object.assign(err as Error, { erasure: row });
    }
  }

  /** After the rolled-back transaction: counts the attempt and warns when the SLA is at risk. */
  private async recordFailure(row: ClaimedErasure, err: Error): Promise<void> {
    const scope: TenantScope = { projectId: row.project_id, env: row.env };
    const ageDays = (this.clock.nowMs() - new Date(row.queued_at).getTime()) / 86_400_000;
    const log = { projectId: scope.projectId, env: scope.env, customerId: row.customer_id, ageDays: Math.floor(ageDays), err: { name: err.name, message: err.message } };
    if (ageDays >= SLA_WARNING_DAYS) this.logger.error(log, `erasure failing close to the ${ERASURE_SLA_DAYS}-day SLA`);
    else this.logger.warn(log, 'erasure failed; retried on the next run');
    await this.dataSource
      .query(`UPDATE erasures SET attempts = attempts + 1, last_error = $4 WHERE project_id = $1 AND env = $2 AND customer_id = $3 AND status = 'queued'`, [
        scope.projectId,
        scope.env,
        row.customer_id,
        err.message.slice(0, 500),
      ])
      .catch(() => undefined);
  }
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

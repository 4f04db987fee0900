import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { APP_LOGGER, type AppLogger, Clock, PeriodicJobs } from '../../platform/src/index.js';

export const AUDIT_RETENTION_MONTHS = 24;
const PURGE_INTERVAL_MS = 60 * 60 * 1000;
const PURGE_BATCH = 5_000;
// Any constant; the same for every replica. Only one replica purges at a time.
const PURGE_LOCK_KEY = 727_200;

/** The cutoff: entries created strictly before now minus 24 calendar months are purged. */
export function auditRetentionCutoff(nowMs: number, months = AUDIT_RETENTION_MONTHS): Date {
  const cutoff = new Date(nowMs);
  cutoff.setUTCMonth(cutoff.getUTCMonth() - months);
  return cutoff;
}

/**
 * Deletes audit entries older than 24 months. Runs hourly in-process (not under
 * NODE_ENV=test: tests call purgeOnce()). Safe with several replicas: each batch runs in one
 * transaction holding a transaction-level advisory lock; a replica that cannot take it skips.
 */
@Injectable()
export class AuditRetentionJob implements OnApplicationBootstrap {
  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    private readonly clock: Clock,
    private readonly jobs: PeriodicJobs,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  onApplicationBootstrap(): void {
    this.jobs.every('audit retention purge', PURGE_INTERVAL_MS, async () => {
      const purged = await this.purgeOnce();
      if (purged > 0) this.logger.info({ purged }, 'audit retention purge');
    });
  }

  /**
   * Purges every entry past retention (in batches); returns how many were deleted (0 when
   * another replica holds the lock). `projectId` limits it to one project (a test sharing its
   * database with others, or an operator re-run).
   */
  async purgeOnce(options: { projectId?: string } = {}): Promise<number> {
    const cutoff = auditRetentionCutoff(this.clock.nowMs());
    let total = 0;
    for (;;) {
      const deleted = await this.dataSource.transaction(async (manager) => {
        const [{ locked }] = await manager.query(`SELECT pg_try_advisory_xact_lock($1) AS locked`, [PURGE_LOCK_KEY]);
        if (!locked) return -1;
        await manager.query(`SET LOCAL audit.retention_purge = 'on'`);
        // A CTE so the driver returns rows (a bare DELETE ... RETURNING comes back as [rows, count]).
        const [{ n }]: { n: number }[] = await manager.query(
          `WITH purged AS (
             DELETE FROM audit_entries
              WHERE id IN (SELECT id FROM audit_entries
                            WHERE created_at < $1 AND ($3::text IS NULL OR project_id = $3)
                            ORDER BY created_at LIMIT $2)
              RETURNING 1)
           SELECT count(*)::int AS n FROM purged`,
          [cutoff, PURGE_BATCH, options.projectId ?? null],
        );
        return n;
      });
      if (deleted < 0) return total;
      total += deleted;
      if (deleted < PURGE_BATCH) return total;
    }
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { APP_LOGGER, type AppLogger, Clock, OnJob, crossTenant } from '#platform';
import { AuditEntriesRepository } from './audit-entries.repository.js';

export const AUDIT_RETENTION_MONTHS = 24;
const PURGE_INTERVAL_MS = 60 * 60 * 1000;
const PURGE_BATCH = 5_000;
/** Retention spans every tenant's entries. */
const RETENTION = crossTenant('audit retention purge');

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
export class AuditRetentionJob {
  constructor(
    private readonly entries: AuditEntriesRepository,
    private readonly clock: Clock,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  /** A recurring durable job (hourly), one replica at a time. */
  @OnJob({
    type: 'audit.purge_expired_entries',
    everyMs: PURGE_INTERVAL_MS,
    transaction: false,
    maxAttempts: 3,
    leaseMs: 15 * 60_000,
    backoff: { baseMs: 60_000 },
  })
  async purge(): Promise<void> {
    const purged = await this.purgeOnce();
    if (purged > 0) this.logger.info({ purged }, 'audit retention purge');
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
      const deleted = await this.entries.purgeBatch(RETENTION, cutoff, PURGE_BATCH, options.projectId ?? null);
      if (deleted === null) return total;
      total += deleted;
      if (deleted < PURGE_BATCH) return total;
    }
  }
}

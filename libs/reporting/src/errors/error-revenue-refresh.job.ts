import { Injectable } from '@nestjs/common';
import { Clock, OnJob, crossTenant } from '#platform';
import { ErrorRevenueSnapshotsRepository } from './error-revenue-snapshots.repository.js';
import { ErrorRevenue } from './error-revenue.service.js';

const REFRESH = crossTenant('error revenue refresh');
/** The job runs every 10 s of the service clock. */
export const ERROR_REVENUE_REFRESH_EVERY_MS = 10_000;
/** Snapshots read within this long are kept fresh; the others age until read again. */
export const ERROR_REVENUE_READ_WINDOW_MS = 10 * 60_000;
/** A kept snapshot is worked out again once this old: with the job's period, well within the 60 s a read accepts. */
export const ERROR_REVENUE_REFRESH_AFTER_MS = 30_000;
/** Snapshots nobody read for a day are dropped. */
const DROP_UNREAD_AFTER_MS = 86_400_000;
const BATCH = 200;

/**
 * Keeps the error revenue snapshots that were read lately fresh (a recurring durable job,
 * one replica at a time), so reads of `/v1/errors` and `/v1/errors/affected` answer from
 * them instead of working them out.
 */
@Injectable()
export class ErrorRevenueRefreshJob {
  constructor(
    private readonly snapshots: ErrorRevenueSnapshotsRepository,
    private readonly revenue: ErrorRevenue,
    private readonly clock: Clock,
  ) {}

  @OnJob({
    type: 'reporting.refresh_error_revenue',
    everyMs: ERROR_REVENUE_REFRESH_EVERY_MS,
    maxAttempts: 5,
    leaseMs: 120_000,
    transaction: false,
    backoff: { baseMs: 5_000, maxMs: 60_000 },
  })
  async refresh(): Promise<void> {
    await this.refreshOnce();
  }

  /** One pass; returns how many snapshots it worked out again. */
  async refreshOnce(): Promise<number> {
    const nowMs = this.clock.nowMs();
    await this.snapshots.dropUnread(REFRESH, nowMs - DROP_UNREAD_AFTER_MS);
    const due = await this.snapshots.due(REFRESH, nowMs - ERROR_REVENUE_READ_WINDOW_MS, nowMs - ERROR_REVENUE_REFRESH_AFTER_MS, BATCH);
    for (const snapshot of due) await this.revenue.refresh(REFRESH.scopeOf(snapshot), snapshot.fingerprint);
    return due.length;
  }
}

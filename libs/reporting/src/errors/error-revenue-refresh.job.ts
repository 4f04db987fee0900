import { Injectable } from '@nestjs/common';
import { Clock, OnJob, crossTenant } from '#platform';
import { ErrorRevenueSnapshotsRepository } from './error-revenue-snapshots.repository.js';
import { ErrorRevenue, type WorkPace } from './error-revenue.service.js';

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
 * One run starts no new snapshot after this much wall time, and a run that used it is followed
 * at once (the period counts from a run's start): paced, the job works without pause while
 * snapshots are due, and a snapshot that became due is worked out again within 60 s of its
 * computation while the job keeps up.
 */
export const ERROR_REVENUE_REFRESH_BUDGET_MS = 10_000;

/**
 * The refresh's pace: 500 affected users per slice (two statements, 10 – 40 ms of database time
 * at a million customers), and before each slice a rest as long as the work since the last one
 * took (wall time), so the job holds at most half of one connection's time and never a core for
 * longer than a slice. Worked out back to back, the snapshots read lately made the reads of the
 * minutes after them queue behind a second or more of lookups every 30 s.
 */
export class RestAsLongAsWorked implements WorkPace {
  readonly sliceUsers = 500;
  private sliceStartMs: number;

  constructor(private readonly clock: Clock) {
    this.sliceStartMs = clock.wallNowMs();
  }

  async rest(): Promise<void> {
    const workedMs = this.clock.wallNowMs() - this.sliceStartMs;
    if (workedMs > 0) await new Promise((resolve) => setTimeout(resolve, workedMs));
    this.sliceStartMs = this.clock.wallNowMs();
  }
}

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
    repeatFrom: 'start',
    maxAttempts: 5,
    leaseMs: 120_000,
    transaction: false,
    backoff: { baseMs: 5_000, maxMs: 60_000 },
  })
  async refresh(): Promise<void> {
    await this.refreshOnce({ pace: new RestAsLongAsWorked(this.clock), budgetMs: ERROR_REVENUE_REFRESH_BUDGET_MS });
  }

  /**
   * One pass, the oldest computation first; returns how many snapshots it worked out again.
   * With a pace, each snapshot's lookups are spread by it; with a budget (wall time), no
   * snapshot is started after it is spent (the next run takes the rest).
   */
  async refreshOnce(options: { pace?: WorkPace; budgetMs?: number } = {}): Promise<number> {
    const deadlineMs = options.budgetMs === undefined ? Infinity : this.clock.wallNowMs() + options.budgetMs;
    const nowMs = this.clock.nowMs();
    await this.snapshots.dropUnread(REFRESH, nowMs - DROP_UNREAD_AFTER_MS);
    const due = await this.snapshots.due(REFRESH, nowMs - ERROR_REVENUE_READ_WINDOW_MS, nowMs - ERROR_REVENUE_REFRESH_AFTER_MS, BATCH);
    let done = 0;
    for (const snapshot of due) {
      if (this.clock.wallNowMs() >= deadlineMs) break;
      await this.revenue.refresh(REFRESH.scopeOf(snapshot), snapshot.fingerprint, options.pace);
      done++;
    }
    return done;
  }
}

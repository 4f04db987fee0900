import { Injectable } from '@nestjs/common';
import { Clock, OnJob, Readiness, crossTenant } from '#platform';
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
 * One run starts no new snapshot after this much wall time: the next run comes 10 s after it
 * ends, so the job (which holds the replica's job worker while it runs and rests) takes at most
 * about half of the worker's time, and a snapshot that became due is worked out again within
 * 60 s of its computation while the job keeps up.
 */
export const ERROR_REVENUE_REFRESH_BUDGET_MS = 10_000;

/**
 * The refresh's pace: 500 affected users per slice (an alias lookup and a ledger read, 10 – 40 ms
 * of database time at a million customers), and before each slice a rest as long as the work
 * since the last rest took (wall time), so the job's statements run at most half the time and
 * never hold a core for longer than a slice. Worked out back to back, the snapshots read lately
 * made the reads of the minutes after them queue behind a second or more of lookups every 30 s.
 * Once `stopping` answers true (the replica is shutting down) it rests no more.
 */
export class RestAsLongAsWorked implements WorkPace {
  readonly sliceUsers = 500;
  private sliceStartMs: number;

  constructor(
    private readonly clock: Clock,
    private readonly stopping: () => boolean = () => false,
  ) {
    this.sliceStartMs = clock.wallNowMs();
  }

  async rest(): Promise<void> {
    const workedMs = this.clock.wallNowMs() - this.sliceStartMs;
    if (workedMs > 0 && !this.stopping()) await new Promise((resolve) => setTimeout(resolve, workedMs));
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
    private readonly readiness: Readiness,
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
    const stopping = () => this.readiness.shuttingDown;
    await this.refreshOnce({ pace: new RestAsLongAsWorked(this.clock, stopping), budgetMs: ERROR_REVENUE_REFRESH_BUDGET_MS, stopping });
  }

  /**
   * One pass, the oldest computation first; returns how many snapshots it worked out again.
   * With a pace, each snapshot's lookups are spread by it; with a budget (wall time), no
   * snapshot is started after it is spent (the next run takes the rest), nor once `stopping`
   * answers true (a shutting-down replica finishes the snapshot in hand only).
   */
  async refreshOnce(options: { pace?: WorkPace; budgetMs?: number; stopping?: () => boolean } = {}): Promise<number> {
    const deadlineMs = options.budgetMs === undefined ? Infinity : this.clock.wallNowMs() + options.budgetMs;
    const nowMs = this.clock.nowMs();
    await this.snapshots.dropUnread(REFRESH, nowMs - DROP_UNREAD_AFTER_MS);
    const due = await this.snapshots.due(REFRESH, nowMs - ERROR_REVENUE_READ_WINDOW_MS, nowMs - ERROR_REVENUE_REFRESH_AFTER_MS, BATCH);
    let done = 0;
    for (const snapshot of due) {
      if (this.clock.wallNowMs() >= deadlineMs || options.stopping?.()) break;
      await this.revenue.refresh(REFRESH.scopeOf(snapshot), snapshot.fingerprint, options.pace);
      done++;
    }
    return done;
  }
}

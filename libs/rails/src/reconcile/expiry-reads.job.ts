import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable } from '@nestjs/common';
import { APP_LOGGER, type AppLogger, Clock, Metrics, OnJob, crossTenant } from '#platform';
import { PURCHASE_RAILS } from '#entitlements';
import { type ClaimedExpiryRead, ExpiryReadsRepository } from './expiry-reads.repository.js';
import { type ExpiryReadSettlement, lanesOf, railIdToRead, settleExpiryRead } from './expiry-reads.js';
import { RailReader, type RailReadResult } from '../reading/rail-reader.service.js';

const SWEEP = crossTenant('rails reads at expiry');

/** The sweep runs every 10 s of the service clock (a test-clock advance makes it due at once). */
export const EXPIRY_READS_EVERY_MS = 10_000;
/**
 * One sweep stops claiming after 15 s of wall time, so the service clock is looked at again
 * (next sweep) well within 30 s of wall time.
 */
export const EXPIRY_READS_SWEEP_BUDGET_MS = 15_000;
/** A leased row another replica may take over after this long (wall clock): a dead replica's rows. */
export const EXPIRY_READ_LEASE_MS = 60_000;
const SCHEDULE_BATCH = 5_000;
const CLAIM_BATCH = 500;
/** (project, rail) lanes read at once; each lane reads one row at a time. */
const LANES_AT_ONCE = 32;

export interface ExpirySweepSummary {
  scheduled: number;
  read: number;
  outcomes: Record<string, number>;
}

/**
 * Reads at expiry (store-rails.md "Reading the rails", 1): every active rail subscription
 * whose end passed without a newer rail state is read from its rail through the RailReader,
 * which applies what it reads like a notification (same applier, audit `reconciliation`,
 * outbound webhook events). A recurring durable job (one replica at a time); each due row is
 * leased with FOR UPDATE SKIP LOCKED, so even two sweeps at once never read a row twice.
 * Reads are spread over (project, rail) lanes, one read at a time per lane; a lane told to
 * wait (the reader's `retryAfterMs`) stops for this sweep and its rows are rescheduled.
 */
@Injectable()
export class ExpiryReadsJob {
  private readonly worker = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;

  constructor(
    private readonly reads: ExpiryReadsRepository,
    private readonly reader: RailReader,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  @OnJob({
    type: 'rails.read_at_expiry',
    everyMs: EXPIRY_READS_EVERY_MS,
    maxAttempts: 5,
    leaseMs: 120_000,
    transaction: false,
    backoff: { baseMs: 5_000, maxMs: 30_000 },
  })
  async sweep(): Promise<void> {
    await this.sweepOnce();
  }

  /** Schedules what became due and reads due rows until none is left or the budget is spent. */
  async sweepOnce(budgetMs = EXPIRY_READS_SWEEP_BUDGET_MS): Promise<ExpirySweepSummary> {
    const deadline = this.clock.wallNowMs() + budgetMs;
    const summary: ExpirySweepSummary = { scheduled: 0, read: 0, outcomes: {} };
    try {
      while (this.clock.wallNowMs() < deadline) {
        const nowMs = this.clock.nowMs();
        summary.scheduled += await this.reads.schedule(SWEEP, nowMs, SCHEDULE_BATCH);
        const claimed = await this.reads.claim(SWEEP, {
          nowMs,
          wallNowMs: this.clock.wallNowMs(),
          leaseMs: EXPIRY_READ_LEASE_MS,
          worker: this.worker,
          limit: CLAIM_BATCH,
        });
        if (claimed.length === 0) break;
        const lanes = lanesOf(claimed);
        let next = 0;
        const runLanes = async () => {
          while (next < lanes.length) await this.readLane(lanes[next++], deadline, summary);
        };
        await Promise.all(Array.from({ length: Math.min(LANES_AT_ONCE, lanes.length) }, runLanes));
      }
    } finally {
      await this.refreshGauge();
    }
    return summary;
  }

  private async readLane(lane: ClaimedExpiryRead[], deadline: number, summary: ExpirySweepSummary): Promise<void> {
    let waitUntilMs: number | null = null;
    for (const row of lane) {
      const scope = SWEEP.scopeOf(row);
      if (this.clock.wallNowMs() >= deadline) {
        await this.reads.release(scope, row, this.worker);
        continue;
      }
      let settlement: ExpiryReadSettlement;
      if (!row.stillDue) {
        settlement = { status: 'done', attempts: row.attempts, nextReadAtMs: this.clock.nowMs(), outcome: 'superseded' };
      } else if (waitUntilMs !== null) {
        // The lane was told to wait: its other rows are read after the wait, not now.
        settlement = { status: 'pending', attempts: row.attempts, nextReadAtMs: waitUntilMs, outcome: 'rate_limited' };
      } else {
        const result = await this.read(row);
        summary.read += 1;
        settlement = settleExpiryRead(result, row.attempts, this.clock.nowMs());
        if (settlement.outcome === 'rate_limited') waitUntilMs = settlement.nextReadAtMs;
      }
      summary.outcomes[settlement.outcome] = (summary.outcomes[settlement.outcome] ?? 0) + 1;
      this.metrics.railExpiryReads.inc({ rail: row.rail, outcome: settlement.outcome });
      await this.reads.settle(scope, row, this.worker, settlement, this.clock.nowMs());
    }
  }

  /** One read; a reader that throws reads as an unreadable rail (retried with back-off). */
  private async read(row: ClaimedExpiryRead): Promise<Pick<RailReadResult, 'found' | 'decision' | 'retryAfterMs' | 'throttled'>> {
    try {
      return await this.reader.readRailId(SWEEP.scopeOf(row), row.rail, railIdToRead(row), 'expiry');
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      this.logger.warn(
        { projectId: row.projectId, env: row.env, rail: row.rail, err: { name: error.name, message: error.message } },
        'rail read at expiry failed; retried with back-off',
      );
      return { found: 'unavailable', decision: 'unavailable' };
    }
  }

  private async refreshGauge(): Promise<void> {
    const due = await this.reads.dueByRail(SWEEP, this.clock.nowMs());
    for (const rail of PURCHASE_RAILS) this.metrics.railExpiryReadsDue.set({ rail }, due.get(rail) ?? 0);
  }
}

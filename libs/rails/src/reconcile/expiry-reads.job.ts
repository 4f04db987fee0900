import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, APP_LOGGER, type AppConfig, type AppLogger, Clock, Metrics, OnJob, crossTenant } from '#platform';
import { PURCHASE_RAILS } from '#entitlements';
import { type ClaimedExpiryRead, ExpiryReadsRepository } from './expiry-reads.repository.js';
import { type ExpiryReadSettlement, railIdToRead, settleExpiryRead } from './expiry-reads.js';
import { ExpiryReadLanes, Slots, SweepPace } from './expiry-read-lanes.js';
import { RailReader, type RailReadResult } from '../reading/rail-reader.service.js';

const SWEEP = crossTenant('rails reads at expiry');

/**
 * A sweep starts every 10 s of the service clock, at once after one that took longer (a
 * test-clock advance makes it due at once too).
 */
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
/**
 * A paced sweep claims while fewer rows than this are queued: its queue holds what came due in
 * its pace's horizon (up to 400 reads/s); an unpaced one keeps twice its concurrency queued.
 */
const PACED_QUEUE_LIMIT = 4 * CLAIM_BATCH;
/** A lane told to wait at most this long (wall) keeps its rows for this sweep; longer, they are rescheduled. */
const HOLD_WAIT_MS = 2_000;
/** Settlements are written together once this many are waiting, or this often. */
const SETTLE_BATCH = 64;
const SETTLE_EVERY_MS = 100;
/** After a claim that took everything due, the next one waits this long (wall) unless nothing is left to read. */
const CLAIM_PAUSE_MS = 500;
/**
 * A paced sweep reads its queue in about this long (wall), at most a second apart: rows coming
 * due at a steady rate are read at that rate. Rows still queued when the budget ends go back
 * unread, and the next sweep, due at once (the cadence counts from a sweep's start), takes them.
 */
const PACE_HORIZON_MS = 5_000;
const PACE_MAX_SPACING_MS = 1_000;
/** A claimed row that has waited this long past its read time (service clock) makes the sweep read unpaced: a backlog. */
const BACKLOG_AFTER_MS = 60_000;

export interface ExpirySweepSummary {
  scheduled: number;
  read: number;
  outcomes: Record<string, number>;
}

/** The longest the dispatcher sleeps when only a read or a claim ending can give it work. */
const IDLE_WAIT_MS = 1_000;

/** Resolves after `ms`, or as soon as one of `events` settles. */
async function waitFor(ms: number, events: readonly Promise<unknown>[]): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))), ...events]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Reads at expiry (docs/rails.md, "Reconciliation at expiry"): every active rail subscription
 * whose end passed without a newer rail state is read from its rail through the RailReader,
 * which applies what it reads like a notification (same applier, audit `reconciliation`,
 * outbound webhook events). A recurring durable job (one replica at a time); each due row is
 * leased with FOR UPDATE SKIP LOCKED, so even two sweeps at once never read a row twice.
 * Leased rows are queued on (project, rail) lanes and read by a bounded number of concurrent
 * reads per replica (RAIL_EXPIRY_READS_CONCURRENCY), each lane paced at its project's read
 * rate; the project's token bucket still decides every read. A lane told to wait briefly
 * waits; told to wait longer (the rate across replicas, a store's `429`/`5xx` back-off), its
 * rows are rescheduled, and the other lanes read on.
 */
@Injectable()
export class ExpiryReadsJob {
  private readonly worker = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private readonly concurrency: number;
  /**
   * The reads' writes (one transaction each) hold at most half the database pool at once: the
   * rest of the API, the public reads first, always finds a connection during a mass expiry.
   */
  private readonly writes: Slots;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly reads: ExpiryReadsRepository,
    private readonly reader: RailReader,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {
    this.concurrency = config.railExpiryReadsConcurrency;
    this.writes = new Slots(Math.max(1, Math.floor(config.dbPoolSize / 2)));
  }

  @OnJob({
    type: 'rails.read_at_expiry',
    everyMs: EXPIRY_READS_EVERY_MS,
    repeatFrom: 'start',
    maxAttempts: 5,
    leaseMs: 120_000,
    transaction: false,
    backoff: { baseMs: 5_000, maxMs: 30_000 },
  })
  async sweep(): Promise<void> {
    await this.sweepOnce(EXPIRY_READS_SWEEP_BUDGET_MS, this.concurrency, { paced: true });
  }

  /**
   * Schedules what became due and reads due rows until none is left or the budget is spent:
   * `concurrency` reads at once, claiming more rows while the queued ones run low. `paced`
   * (the recurring job) reads at a steady rate (SweepPace) unless a claim holds a row late by
   * more than BACKLOG_AFTER_MS; tests drive unpaced sweeps.
   */
  async sweepOnce(budgetMs = EXPIRY_READS_SWEEP_BUDGET_MS, concurrency = this.concurrency, options: { paced?: boolean } = {}): Promise<ExpirySweepSummary> {
    const deadline = this.clock.wallNowMs() + budgetMs;
    const pace = options.paced ? new SweepPace(PACE_HORIZON_MS, PACE_MAX_SPACING_MS) : null;
    /** The last claim held a row late by more than BACKLOG_AFTER_MS: a backlog is read as fast as the lanes allow. */
    let backlog = false;
    const summary: ExpirySweepSummary = { scheduled: 0, read: 0, outcomes: {} };
    const lanes = new ExpiryReadLanes<ClaimedExpiryRead>();
    const settlements = new SettlementBuffer((batch) => this.reads.settleMany(SWEEP, batch, this.worker, this.clock.nowMs()));
    const inFlight = new Set<Promise<void>>();
    let claiming: Promise<void> | null = null;
    let drained = false;
    let nextClaimAtMs = 0;
    let failure: unknown = null;
    const claimMore = async (): Promise<void> => {
      const idle = lanes.size === 0 && inFlight.size === 0;
      const nowMs = this.clock.nowMs();
      summary.scheduled += await this.reads.schedule(SWEEP, nowMs, SCHEDULE_BATCH);
      const claimed = await this.reads.claim(SWEEP, {
        nowMs,
        leaseMs: EXPIRY_READ_LEASE_MS,
        worker: this.worker,
        limit: CLAIM_BATCH,
      });
      // Nothing due while nothing was queued or read: the sweep is done.
      drained = claimed.length === 0 && idle;
      backlog = claimed.some((row) => nowMs - row.readAtMs > BACKLOG_AFTER_MS);
      // A short claim took all that is due: the next waits a moment unless the queue runs dry.
      if (claimed.length < CLAIM_BATCH) nextClaimAtMs = this.clock.wallNowMs() + CLAIM_PAUSE_MS;
      for (const row of claimed) {
        if (!row.stillDue) {
          this.settled(summary, settlements, row, { status: 'done', attempts: row.attempts, nextReadAtMs: this.clock.nowMs(), outcome: 'superseded' });
        } else {
          lanes.add(row, lanes.has(row) ? undefined : await this.reader.readsPerSecond(row.projectId, row.rail));
        }
      }
    };
    const refill = () => {
      claiming ??= claimMore()
        .catch((err: unknown) => {
          failure ??= err;
        })
        .finally(() => {
          claiming = null;
        });
    };
    try {
      // One dispatcher starts reads as lanes allow, up to `concurrency` at once, and waits for
      // the first of: a read ending, a claim ending, a lane's next slot.
      while (failure === null && this.clock.wallNowMs() < deadline) {
        const wallNowMs = this.clock.wallNowMs();
        const idle = lanes.size === 0 && inFlight.size === 0;
        const queueLimit = pace && !backlog ? PACED_QUEUE_LIMIT : concurrency * 2;
        if (!drained && claiming === null && (idle || (lanes.size < queueLimit && wallNowMs >= nextClaimAtMs))) refill();
        // Undefined while all `concurrency` reads run: no row is taken that could not start.
        const nextPick = () => {
          if (inFlight.size >= concurrency) return undefined;
          const paceWaitMs = pace && !backlog ? pace.waitMs(wallNowMs, lanes.size) : 0;
          if (paceWaitMs > 0) return lanes.size === 0 ? null : { waitMs: paceWaitMs };
          return lanes.next(wallNowMs);
        };
        let pick = nextPick();
        while (pick && 'row' in pick) {
          pace?.started(wallNowMs);
          const read: Promise<void> = this.readOne(pick.row, pick.lane, lanes, settlements, summary)
            .catch((err: unknown) => {
              failure ??= err;
            })
            .finally(() => inFlight.delete(read));
          inFlight.add(read);
          pick = nextPick();
        }
        if (pick === null && inFlight.size === 0 && claiming === null && drained) break;
        const slotMs = pick ? pick.waitMs : IDLE_WAIT_MS;
        const claimMs = claiming === null && !drained ? Math.max(1, nextClaimAtMs - wallNowMs) : IDLE_WAIT_MS;
        await waitFor(Math.max(1, Math.min(slotMs, claimMs, deadline - wallNowMs)), [...inFlight, ...(claiming ? [claiming] : [])]);
      }
      await Promise.all(inFlight);
      if (claiming) await claiming;
      await this.reads.releaseMany(SWEEP, lanes.drainAll(), this.worker);
      await settlements.flush();
      if (failure !== null) throw failure;
    } finally {
      settlements.stop();
      await this.refreshGauge();
    }
    return summary;
  }

  /** Reads one row of a lane and records its settlement, or holds it when the lane is told to wait briefly. */
  private async readOne(
    row: ClaimedExpiryRead,
    lane: string,
    lanes: ExpiryReadLanes<ClaimedExpiryRead>,
    settlements: SettlementBuffer,
    summary: ExpirySweepSummary,
  ): Promise<void> {
    const result = await this.read(row);
    const settlement = settleExpiryRead(result, row.attempts, this.clock.nowMs());
    if (settlement.outcome === 'rate_limited' && (result.retryAfterMs ?? 0) <= HOLD_WAIT_MS) {
      lanes.hold(lane, row, this.clock.wallNowMs() + (result.retryAfterMs ?? 0));
      return;
    }
    if (!result.throttled) summary.read += 1;
    lanes.done(lane);
    this.settled(summary, settlements, row, settlement);
    if (settlement.outcome === 'rate_limited') {
      // The lane waits longer than this sweep holds rows: the rest of its rows are read after the wait.
      for (const queued of lanes.drain(lane)) {
        this.settled(summary, settlements, queued, {
          status: 'pending',
          attempts: queued.attempts,
          nextReadAtMs: settlement.nextReadAtMs,
          outcome: 'rate_limited',
        });
      }
    }
  }

  private settled(summary: ExpirySweepSummary, settlements: SettlementBuffer, row: ClaimedExpiryRead, settlement: ExpiryReadSettlement): void {
    summary.outcomes[settlement.outcome] = (summary.outcomes[settlement.outcome] ?? 0) + 1;
    this.metrics.railExpiryReads.inc({ rail: row.rail, outcome: settlement.outcome });
    settlements.add(row, settlement);
  }

  /** One read; a reader that throws reads as an unreadable rail (retried with back-off). */
  private async read(row: ClaimedExpiryRead): Promise<Pick<RailReadResult, 'found' | 'decision' | 'retryAfterMs' | 'throttled'>> {
    try {
      return await this.reader.readRailId(SWEEP.scopeOf(row), row.rail, railIdToRead(row), 'expiry', { applyWith: (apply) => this.writes.run(apply) });
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

/** Settlements waiting to be written: one statement per SETTLE_BATCH of them, or every SETTLE_EVERY_MS. */
class SettlementBuffer {
  private pending: { row: ClaimedExpiryRead; settlement: ExpiryReadSettlement }[] = [];
  private writing: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private failure: unknown = null;

  constructor(private readonly write: (batch: { row: ClaimedExpiryRead; settlement: ExpiryReadSettlement }[]) => Promise<number>) {}

  add(row: ClaimedExpiryRead, settlement: ExpiryReadSettlement): void {
    this.pending.push({ row, settlement });
    if (this.pending.length >= SETTLE_BATCH) void this.writeOut();
    else this.timer ??= setTimeout(() => void this.writeOut(), SETTLE_EVERY_MS);
  }

  /** Writes what is waiting; throws the first write that failed. */
  async flush(): Promise<void> {
    await this.writeOut();
    if (this.failure !== null) throw this.failure;
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private writeOut(): Promise<void> {
    this.stop();
    const batch = this.pending;
    this.pending = [];
    // One write at a time, in order: a row's settlement is never overtaken by an older one.
    this.writing = this.writing.then(async () => {
      if (batch.length === 0) return;
      try {
        await this.write(batch);
      } catch (err) {
        this.failure ??= err;
      }
    });
    return this.writing;
  }
}

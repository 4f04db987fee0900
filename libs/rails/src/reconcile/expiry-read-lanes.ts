/**
 * The in-memory plan of one sweep's reads: claimed rows queued per (project, rail) lane, each
 * lane paced at its project's read rate (wall clock) with a few reads in flight, lanes served
 * in turn so a busy project never starves another. No I/O.
 */
import type { PurchaseRail } from '#entitlements';
import { laneOf } from './expiry-reads.js';

/**
 * Reads one lane may have in flight: enough to keep its rate with reads that take up to 250 ms,
 * and no more, so a lane whose rail answers slowly holds few of the replica's reads.
 */
export const laneInFlightLimit = (readsPerSecond: number): number => Math.max(2, Math.ceil(readsPerSecond / 4));

interface Lane<T> {
  key: string;
  rows: T[];
  intervalMs: number;
  maxInFlight: number;
  inFlight: number;
  /** Wall ms before which the lane starts no read (its pace, or a wait it was told). */
  nextStartMs: number;
}

export type LanePick<T> = { row: T; lane: string } | { waitMs: number } | null;

/** Lanes live for one sweep: a lane keeps its pace while the sweep refills it. */
export class ExpiryReadLanes<T extends { projectId: string; rail: PurchaseRail }> {
  private readonly lanes = new Map<string, Lane<T>>();
  private queued = 0;

  /** Rows waiting to be read (not in flight). */
  get size(): number {
    return this.queued;
  }

  has(row: { projectId: string; rail: PurchaseRail }): boolean {
    return this.lanes.has(laneOf(row));
  }

  /** Queues `row` on its lane; a new lane reads at `readsPerSecond` (required for a new lane). */
  add(row: T, readsPerSecond?: number): void {
    const key = laneOf(row);
    let lane = this.lanes.get(key);
    if (!lane) {
      const rate = Math.max(0.001, readsPerSecond ?? 1);
      lane = { key, rows: [], intervalMs: 1000 / rate, maxInFlight: laneInFlightLimit(rate), inFlight: 0, nextStartMs: 0 };
      this.lanes.set(key, lane);
    }
    lane.rows.push(row);
    this.queued += 1;
  }

  /**
   * The next row to read at `nowMs` (wall), taken from the lane that has waited longest; else
   * how long until a lane may start one (Infinity: not before a read ends); null when nothing is queued.
   */
  next(nowMs: number): LanePick<T> {
    let best: Lane<T> | null = null;
    let soonest = Infinity;
    for (const lane of this.lanes.values()) {
      if (lane.rows.length === 0 || lane.inFlight >= lane.maxInFlight) continue;
      if (lane.nextStartMs <= nowMs) {
        if (!best || lane.nextStartMs < best.nextStartMs) best = lane;
      } else soonest = Math.min(soonest, lane.nextStartMs);
    }
    if (best) {
      const row = best.rows.shift() as T;
      this.queued -= 1;
      best.inFlight += 1;
      // Paced from the later of now and the lane's slot, so an idle lane never saves up a burst.
      best.nextStartMs = Math.max(nowMs, best.nextStartMs) + best.intervalMs;
      return { row, lane: best.key };
    }
    if (this.queued === 0) return null;
    // Lanes at their in-flight limit only free a slot when a read ends: no time to wait for.
    return { waitMs: Number.isFinite(soonest) ? Math.max(1, Math.ceil(soonest - nowMs)) : Infinity };
  }

  /** A read of the lane ended. */
  done(lane: string): void {
    const state = this.lanes.get(lane);
    if (state) state.inFlight = Math.max(0, state.inFlight - 1);
  }

  /** The lane was told to wait until `untilMs` (wall): `row` goes back to its front, unread. */
  hold(lane: string, row: T, untilMs: number): void {
    const state = this.lanes.get(lane);
    if (!state) return this.add(row);
    state.inFlight = Math.max(0, state.inFlight - 1);
    state.rows.unshift(row);
    this.queued += 1;
    state.nextStartMs = Math.max(state.nextStartMs, untilMs);
  }

  /** Takes every row still queued on the lane (it is to wait longer than this sweep holds rows). */
  drain(lane: string): T[] {
    const state = this.lanes.get(lane);
    if (!state) return [];
    const rows = state.rows.splice(0);
    this.queued -= rows.length;
    return rows;
  }

  /** Takes every queued row (the sweep ends). */
  drainAll(): T[] {
    const rows: T[] = [];
    for (const key of [...this.lanes.keys()]) rows.push(...this.drain(key));
    return rows;
  }
}

/**
 * Spreads a sweep's reads at a steady rate, so what comes due is not read in bursts beside the
 * API's own requests: each read starts one share of `horizonMs` after the previous start, a
 * share per queued row (the queue read in about `horizonMs`; with rows coming due at a steady
 * rate, that rate), and never more than `maxSpacingMs` after it, so a few rows are not drawn
 * out. The sweep uses it unless its rows are late by more than a minute: a backlog is read as
 * fast as the lanes allow.
 */
export class SweepPace {
  private lastStartMs: number | null = null;

  constructor(
    private readonly horizonMs: number,
    private readonly maxSpacingMs: number,
  ) {}

  /** 0 when a read may start at `nowMs` with `queued` rows waiting; else how long (ms) until one may. */
  waitMs(nowMs: number, queued: number): number {
    if (this.lastStartMs === null || queued <= 0) return 0;
    const spacingMs = Math.min(this.horizonMs / queued, this.maxSpacingMs);
    return Math.max(0, Math.ceil(this.lastStartMs + spacingMs - nowMs));
  }

  started(nowMs: number): void {
    this.lastStartMs = nowMs;
  }
}

/** At most `size` works at once; the others wait their turn (first come, first served). */
export class Slots {
  private busy = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size: number) {}

  async run<R>(work: () => Promise<R>): Promise<R> {
    if (this.busy >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.busy += 1;
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      // The slot passes straight to the next waiter, so none is overtaken.
      if (next) next();
      else this.busy -= 1;
    }
  }
}

/**
 * Pure rules of the reads at expiry (docs/rails.md, "Reconciliation at expiry"): when an
 * unreadable rail is read again, what a read's result does to its row, and how due rows are
 * spread over (project, rail) lanes. No I/O.
 */
import type { PurchaseRail } from '#entitlements';
import type { RailReadResult } from '../reading/rail-reader.service.js';

const MINUTE = 60_000;
/** Waits after the 1st, 2nd, 3rd and every later read that found the rail unreadable. */
export const EXPIRY_READ_BACKOFF_MS = [5 * MINUTE, 30 * MINUTE, 120 * MINUTE, 720 * MINUTE] as const;

/** The wait after the `attempts`-th unreadable read (attempts ≥ 1); 12 h from the 4th on. */
export function expiryBackoffMs(attempts: number): number {
  const index = Math.min(Math.max(attempts, 1), EXPIRY_READ_BACKOFF_MS.length) - 1;
  return EXPIRY_READ_BACKOFF_MS[index];
}

export type ExpiryReadOutcome = 'applied' | 'no_change' | 'no_subscription' | 'unavailable' | 'rate_limited' | 'superseded';

/** What happens to a row after its read. */
export interface ExpiryReadSettlement {
  status: 'pending' | 'done';
  attempts: number;
  nextReadAtMs: number;
  outcome: ExpiryReadOutcome;
}

/**
 * A readable rail settles the row (`done`): the applier already wrote what the rail says
 * (a renewal moves `valid_until`, which schedules a new row when that end passes). A read the
 * project's read rate refused (`throttled`, no store asked) is read again after the wait it
 * names, without counting an attempt. An unreadable rail (no credentials, timeout, `5xx`,
 * `429`) counts an attempt and is read again after that attempt's back-off, or the store's
 * own wait when longer; the stored state governs meanwhile.
 */
export function settleExpiryRead(
  result: Pick<RailReadResult, 'found' | 'decision' | 'retryAfterMs' | 'throttled'>,
  attempts: number,
  nowMs: number,
): ExpiryReadSettlement {
  if (result.found === 'unavailable') {
    const wait = Math.ceil(Math.max(0, result.retryAfterMs ?? 0));
    if (result.throttled) return { status: 'pending', attempts, nextReadAtMs: nowMs + Math.max(1, wait), outcome: 'rate_limited' };
    const next = attempts + 1;
    return { status: 'pending', attempts: next, nextReadAtMs: nowMs + Math.max(expiryBackoffMs(next), wait), outcome: 'unavailable' };
  }
  if (result.found === 'none') return { status: 'done', attempts, nextReadAtMs: nowMs, outcome: 'no_subscription' };
  return { status: 'done', attempts, nextReadAtMs: nowMs, outcome: result.decision === 'applied' ? 'applied' : 'no_change' };
}

/** Reads are spread per project and rail: the per-project read rates are per rail. */
export const laneOf = (row: { projectId: string; rail: PurchaseRail }): string => `${row.projectId}\u0000${row.rail}`;

/**
 * The rail id a subscription is read by: its record's subscription id (iOS original
 * transaction id, Android purchase token, card `sub_…`: the processor's "one subscription
 * by id" read).
 */
export const railIdToRead = (row: { subscriptionId: string }): string => row.subscriptionId;

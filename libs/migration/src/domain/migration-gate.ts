/**
 * Pure rules of the migration gate (docs/rails.md, "Migration gate"): what the rails
 * hold for a row's customer decides whether it receives the asserted grant. No I/O.
 */
import type { PurchaseRail } from '#entitlements';
import type { CustomerRailStatus } from '#rails';

export type GateOutcome = 'skipped_rail_backed' | 'skipped_lapsed' | 'undetermined' | 'grant';

/** What one read of a rail id found (the reader's `found`). */
export type RailFound = 'live' | 'ended' | 'none' | 'unavailable';

/** A rail id the gate reads before deciding: the customer has purchase ids but no rail record. */
export interface GateRailId {
  rail: PurchaseRail;
  value: string;
}

/**
 * The stored records decide first (a live subscription on any rail, else ended ones). A
 * customer without a record but with purchase ids is decided by reading those ids: any live
 * subscription → rail-backed, else any ended one → lapsed, else any rail that could not be
 * read → undetermined (a re-run decides), else (no subscription on any rail) → the grant.
 * Without purchase ids the grant is given.
 */
export function gateOutcome(stored: CustomerRailStatus, purchaseIds: number, reads: readonly RailFound[]): GateOutcome {
  if (stored === 'live') return 'skipped_rail_backed';
  if (stored === 'lapsed') return 'skipped_lapsed';
  if (purchaseIds === 0) return 'grant';
  if (reads.includes('live')) return 'skipped_rail_backed';
  if (reads.includes('ended')) return 'skipped_lapsed';
  // Every purchase id must have been read and found without a subscription.
  if (reads.length < purchaseIds || reads.some((found) => found !== 'none')) return 'undetermined';
  return 'grant';
}

/** The rail ids of the listed ones that name a purchase, once each. */
export function distinctRailIds(ids: readonly GateRailId[]): GateRailId[] {
  const seen = new Map<string, GateRailId>();
  for (const id of ids) seen.set(`${id.rail}\u0000${id.value}`, { rail: id.rail, value: id.value });
  return [...seen.values()];
}

export const railIdKey = (id: GateRailId): string => `${id.rail}\u0000${id.value}`;

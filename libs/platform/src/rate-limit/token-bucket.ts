/** Pure token-bucket math shared by the in-process store and mirrored by the Redis script. */

export interface BucketRule {
  /** Tokens added per second (linear refill). */
  sustained: number;
  /** Capacity; an idle bucket accumulates up to this many tokens. */
  burst: number;
}

export interface BucketState {
  tokens: number;
  updatedMs: number;
}

export interface TakeOutcome {
  state: BucketState;
  granted: number;
}

export const BUCKET_NAMES = [
  'events',
  'purchases',
  'entitlements',
  'heartbeat',
  'forget',
  'alias',
  'sourcemaps',
  'reads',
  'rail_reads_card_payments',
  'rail_reads_ios_store',
  'rail_reads_android_store',
] as const;
export type BucketName = (typeof BUCKET_NAMES)[number];

export const DEFAULT_BUCKET_RULES: Readonly<Record<BucketName, BucketRule>> = Object.freeze({
  events: { sustained: 100, burst: 1000 },
  purchases: { sustained: 10, burst: 100 },
  entitlements: { sustained: 100, burst: 1000 },
  heartbeat: { sustained: 1, burst: 10 },
  forget: { sustained: 1, burst: 10 },
  alias: { sustained: 10, burst: 100 },
  // Source-map uploads (up to 50 MB each): a release's CI burst of batches, then one every 2 s.
  sourcemaps: { sustained: 0.5, burst: 60 },
  /** The read API (docs/api.md, "Read API"), charged per project and key. */
  reads: { sustained: 20, burst: 100 },
  // The service's own reads of each store's API per project (docs/rails.md, "Reading the rails"): a mass
  // expiry is spread over time instead of flooding the store (the stores' quotas are per app).
  rail_reads_card_payments: { sustained: 20, burst: 20 },
  rail_reads_ios_store: { sustained: 10, burst: 10 },
  rail_reads_android_store: { sustained: 10, burst: 10 },
});

/** Tokens available at nowMs. A bucket never seen before starts full. */
export function refill(state: BucketState | undefined, nowMs: number, rule: BucketRule): BucketState {
  if (!state) return { tokens: rule.burst, updatedMs: nowMs };
  if (nowMs <= state.updatedMs) return state;
  const tokens = Math.min(rule.burst, state.tokens + ((nowMs - state.updatedMs) / 1000) * rule.sustained);
  return { tokens, updatedMs: nowMs };
}

/**
 * Takes `cost` tokens. All-or-nothing unless `partial`, in which case it takes as many
 * whole tokens as are available up to `cost` (a batch lands what fits).
 */
export function take(state: BucketState | undefined, nowMs: number, rule: BucketRule, cost: number, partial: boolean): TakeOutcome {
  const current = refill(state, nowMs, rule);
  let granted = 0;
  if (partial) granted = Math.max(0, Math.min(cost, Math.floor(current.tokens)));
  else if (current.tokens >= cost) granted = cost;
  return { state: { tokens: current.tokens - granted, updatedMs: current.updatedMs }, granted };
}

/** Milliseconds until `needed` tokens are available (capped at a full bucket). */
export function msUntilAvailable(tokens: number, needed: number, rule: BucketRule): number {
  const target = Math.min(needed, rule.burst);
  if (tokens >= target) return 0;
  if (rule.sustained <= 0) return 60_000;
  return Math.ceil(((target - tokens) / rule.sustained) * 1000);
}

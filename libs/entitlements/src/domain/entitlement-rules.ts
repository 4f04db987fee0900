/**
 * Pure rules of the entitlement model: rails, states, grant durations, `validUntil`,
 * `isActive`, and how several rows of one key collapse into the one a read returns.
 * No I/O, no clock: callers pass the time in.
 */

export const RAILS = ['ios_store', 'card_payments', 'android_store', 'manual'] as const;
export type Rail = (typeof RAILS)[number];

/** Rails that sell products (the catalogue names products on these only). */
export const PURCHASE_RAILS = ['ios_store', 'card_payments', 'android_store'] as const;
export type PurchaseRail = (typeof PURCHASE_RAILS)[number];

export const ENTITLEMENT_STATES = ['active', 'revoked', 'expired'] as const;
export type EntitlementState = (typeof ENTITLEMENT_STATES)[number];

export const GRANT_DURATIONS = ['P30D', 'P90D', 'P1Y', 'lifetime'] as const;
export type GrantDuration = (typeof GRANT_DURATIONS)[number];

/** Keys written by grant and revoke: snake_case, 2 to 40 chars. */
export const GRANT_KEY_PATTERN = /^[a-z][a-z0-9_]*$/;
export const GRANT_KEY_MIN = 2;
export const GRANT_KEY_MAX = 40;

/** Keys named in the product catalogue (and written by rails): 1 to 64 chars, no spaces. */
export const CATALOG_KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]*$/;
export const CATALOG_KEY_MAX = 64;

/** The `source.productId` of every manual grant; `source.subscriptionId` is the grant's audit event id. */
export const MANUAL_PRODUCT_ID = 'manual';

const DAY_SECONDS = 86_400;

/**
 * When a grant of `duration` made at `nowSeconds` ends (Unix seconds), null for lifetime.
 * P30D and P90D are exact multiples of 24 h. P1Y is one calendar year in UTC: the same month,
 * day and time of day next year; 29 February maps to 28 February of a common year.
 */
export function validUntilFor(duration: GrantDuration, nowSeconds: number): number | null {
  switch (duration) {
    case 'P30D':
      return nowSeconds + 30 * DAY_SECONDS;
    case 'P90D':
      return nowSeconds + 90 * DAY_SECONDS;
    case 'P1Y': {
      const start = new Date(nowSeconds * 1000);
      const next = new Date(start.getTime());
      next.setUTCFullYear(start.getUTCFullYear() + 1);
      if (next.getUTCMonth() !== start.getUTCMonth()) next.setUTCDate(0); // 29 Feb -> 28 Feb
      return Math.floor(next.getTime() / 1000);
    }
    case 'lifetime':
      return null;
  }
}

/** Active: the state says so and `validUntil` (Unix s, null = lifetime) has not been reached. */
export function isActiveAt(state: EntitlementState, validUntil: number | null, nowMs: number): boolean {
  return state === 'active' && (validUntil === null || nowMs < validUntil * 1000);
}

/**
 * A grant never shortens an active manual entitlement: the result is the later of the current
 * end and the new one (lifetime wins). On an inactive one it starts afresh. A retried grant
 * therefore does not stack time.
 */
export function grantedValidUntil(current: { active: boolean; validUntil: number | null } | null, granted: number | null): number | null {
  if (!current || !current.active) return granted;
  if (current.validUntil === null || granted === null) return null;
  return Math.max(current.validUntil, granted);
}

/** Orders two active entitlements of one key: lifetime first, then the later end, then the newer write. */
export function strongerFirst(a: { validUntil: number | null; updatedAt: number }, b: { validUntil: number | null; updatedAt: number }): number {
  const endA = a.validUntil ?? Number.POSITIVE_INFINITY;
  const endB = b.validUntil ?? Number.POSITIVE_INFINITY;
  if (endA !== endB) return endA > endB ? -1 : 1;
  return b.updatedAt - a.updatedAt;
}

/**
 * One entry per key: when several rails grant the same key, a read returns the strongest
 * (see strongerFirst); the result is sorted by key.
 */
export function collapseByKey<T extends { key: string; validUntil: number | null; updatedAt: number }>(items: readonly T[]): T[] {
  const best = new Map<string, T>();
  for (const item of items) {
    const current = best.get(item.key);
    if (!current || strongerFirst(item, current) < 0) best.set(item.key, item);
  }
  return [...best.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

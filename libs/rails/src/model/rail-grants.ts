/**
 * Pure rules of the grants a rail subscription's items make (RailStateApplier): which item
 * grants a key longest, and how an applied state is described in its audit entry. No I/O.
 */
import type { RailStateChange } from './rail-state-applier.service.js';
import type { RailSubscriptionItem, RailSubscriptionRecord } from './rail-model.js';

const iso = (seconds: number): string => new Date(seconds * 1000).toISOString();

/** Lifetime beats any end; otherwise the later end. */
export function outlasts(a: Pick<RailSubscriptionRecord, 'validUntil'>, b: Pick<RailSubscriptionRecord, 'validUntil'>): boolean {
  return (a.validUntil ?? Number.POSITIVE_INFINITY) > (b.validUntil ?? Number.POSITIVE_INFINITY);
}

/**
 * Per key granted by some item: the item that grants it longest (keys in the order of the
 * items, then of the catalogue).
 */
export async function grantsOf(
  items: readonly RailSubscriptionItem[],
  keysOf: (productId: string) => Promise<string[]>,
): Promise<Map<string, RailSubscriptionItem>> {
  const granted = new Map<string, RailSubscriptionItem>();
  for (const item of items) {
    for (const key of await keysOf(item.productId)) {
      const current = granted.get(key);
      if (!current || outlasts(item, current)) granted.set(key, item);
    }
  }
  return granted;
}

/** The audit entry's reason of an applied state: the keys, the products, and until when. */
export function describeApplied(change: RailStateChange, items: readonly RailSubscriptionItem[], keys: string[]): string {
  const what = `${keys.join(', ')} from ${[...new Set(items.map((item) => item.productId))].join(', ')}`;
  if (change.state === 'active') {
    return change.validUntil === null ? `Active for life: ${what}` : `Active until ${iso(change.validUntil)}: ${what}`;
  }
  return `${change.endedBy === 'revoked' ? 'Revoked' : 'Ended'} on the rail: ${what}`;
}

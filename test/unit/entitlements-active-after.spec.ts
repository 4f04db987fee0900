import { ORDERABLE_KEY, activeAfter, byCodeUnits, keyOrderProbe } from '../../libs/entitlements/src/domain/active-after.js';
import type { PublicEntitlement } from '../../libs/entitlements/src/domain/public-entitlement.js';

const NOW_MS = 1_800_000_000_000;
const row = (key: string, rail: PublicEntitlement['source']['rail'], validUntil: number | null, isActive = true): PublicEntitlement => ({
  object: 'entitlement',
  key,
  isActive,
  validUntil,
  source: { rail, productId: rail === 'manual' ? 'manual' : 'prod', subscriptionId: `sub_${key}_${rail}` },
  updatedAt: 1_700_000_000,
});
const later = NOW_MS / 1000 + 3600;

/** The state after a change, derived from the state before and the rows written, as reading it again would answer. */
describe('activeAfter', () => {
  it('a written row replaces the row of its key and rail in place, in any text order', () => {
    const before = [row('b', 'manual', later), row('a', 'ios_store', later)];
    const extended = row('b', 'manual', later + 100);
    expect(activeAfter(before, [extended], NOW_MS, false)).toEqual([extended, before[1]]);
  });

  it('a written row that is no longer active drops out (revoked, expired, or ended by time)', () => {
    const before = [row('a', 'manual', later), row('b', 'card_payments', later), row('c', 'manual', NOW_MS / 1000 + 1)];
    const revoked = row('a', 'manual', later, false);
    expect(activeAfter(before, [revoked], NOW_MS, false)).toEqual([before[1], before[2]]);
    // the row of c ended between the read before and now
    expect(activeAfter(before, [revoked], NOW_MS + 1000, false)).toEqual([before[1]]);
  });

  it('a new key and rail is placed by code units where the database orders so, else left to a read', () => {
    const before = [row('pro', 'manual', later), row('pro', 'card_payments', later)].reverse();
    const added = [row('cloud_sync', 'card_payments', later), row('pro', 'android_store', null)];
    expect(activeAfter(before, added, NOW_MS, true)).toEqual([added[0], added[1], before[0], before[1]]);
    expect(activeAfter(before, added, NOW_MS, false)).toBeNull();
    // a new row that does not stay needs no order
    expect(activeAfter(before, [row('zz', 'manual', later, false)], NOW_MS, false)).toEqual(before);
    // a key outside the alphabet the probe covers is always left to a read
    expect(activeAfter([], [row('clé', 'manual', later)], NOW_MS, true)).toBeNull();
  });

  it('the last write of a key and rail wins, also of a row new to the change', () => {
    const first = row('team', 'card_payments', later);
    const second = row('team', 'card_payments', later + 5);
    expect(activeAfter([], [first, second], NOW_MS, true)).toEqual([second]);
    expect(activeAfter([], [first, row('team', 'card_payments', later, false)], NOW_MS, false)).toEqual([]);
  });

  it('the probe covers every one- and two-character string of the key alphabet, each once', () => {
    const probe = keyOrderProbe();
    expect(new Set(probe).size).toBe(probe.length);
    expect(probe.every((text) => ORDERABLE_KEY.test(text))).toBe(true);
    expect(probe.filter((text) => text.length === 1)).toHaveLength(66);
    expect(probe).toHaveLength(66 + 66 * 66);
    expect([...probe].sort(byCodeUnits).slice(0, 3)).toEqual(['-', '--', '-.']);
  });
});

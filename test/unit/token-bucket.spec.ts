import { type BucketRule, DEFAULT_BUCKET_RULES, msUntilAvailable, refill, take } from '#platform';

const rule: BucketRule = { sustained: 10, burst: 100 };
const T0 = 1_700_000_000_000;

describe('token bucket math', () => {
  describe('refill', () => {
    it('a bucket never seen before starts full (burst after idle)', () => {
      expect(refill(undefined, T0, rule)).toEqual({ tokens: 100, updatedMs: T0 });
    });

    it('refills linearly at the sustained rate', () => {
      const empty = { tokens: 0, updatedMs: T0 };
      expect(refill(empty, T0 + 100, rule).tokens).toBeCloseTo(1, 10);
      expect(refill(empty, T0 + 1_000, rule).tokens).toBeCloseTo(10, 10);
      expect(refill(empty, T0 + 2_500, rule).tokens).toBeCloseTo(25, 10);
      expect(refill(empty, T0 + 2_500, rule).updatedMs).toBe(T0 + 2_500);
    });

    it('never exceeds the burst however long the bucket idles', () => {
      expect(refill({ tokens: 95, updatedMs: T0 }, T0 + 1_000, rule).tokens).toBe(100);
      expect(refill({ tokens: 0, updatedMs: T0 }, T0 + 86_400_000, rule).tokens).toBe(100);
    });

    it('does not change when the clock stands still or goes backwards', () => {
      const state = { tokens: 3, updatedMs: T0 };
      expect(refill(state, T0, rule)).toEqual(state);
      expect(refill(state, T0 - 5_000, rule)).toEqual(state);
    });
  });

  describe('take (all-or-nothing)', () => {
    it('takes the whole cost from a fresh bucket', () => {
      const out = take(undefined, T0, rule, 30, false);
      expect(out.granted).toBe(30);
      expect(out.state).toEqual({ tokens: 70, updatedMs: T0 });
    });

    it('drains the burst exactly, then refuses', () => {
      const state = take(undefined, T0, rule, 100, false).state;
      expect(state.tokens).toBe(0);
      const refused = take(state, T0, rule, 1, false);
      expect(refused.granted).toBe(0);
      expect(refused.state.tokens).toBe(0);
    });

    it('grants nothing when the cost does not fully fit, and keeps the tokens', () => {
      const out = take({ tokens: 5, updatedMs: T0 }, T0, rule, 6, false);
      expect(out.granted).toBe(0);
      expect(out.state.tokens).toBe(5);
    });

    it('a cost above the burst is never granted', () => {
      expect(take(undefined, T0, rule, 101, false).granted).toBe(0);
    });

    it('accepts again after the refill', () => {
      const empty = take(undefined, T0, rule, 100, false).state;
      expect(take(empty, T0 + 99, rule, 1, false).granted).toBe(0);
      const later = take(empty, T0 + 100, rule, 1, false);
      expect(later.granted).toBe(1);
      expect(later.state.tokens).toBeCloseTo(0, 10);
    });

    it('a cost of zero is always granted and takes nothing', () => {
      const out = take({ tokens: 0, updatedMs: T0 }, T0, rule, 0, false);
      expect(out.granted).toBe(0);
      expect(out.state.tokens).toBe(0);
    });
  });

  describe('take (partial)', () => {
    it('lands what fits, in whole tokens', () => {
      const out = take({ tokens: 7.6, updatedMs: T0 }, T0, rule, 20, true);
      expect(out.granted).toBe(7);
      expect(out.state.tokens).toBeCloseTo(0.6, 10);
    });

    it('takes the whole cost when it fits', () => {
      const out = take(undefined, T0, rule, 40, true);
      expect(out.granted).toBe(40);
      expect(out.state.tokens).toBe(60);
    });

    it('grants nothing from an empty bucket', () => {
      const out = take({ tokens: 0.4, updatedMs: T0 }, T0, rule, 5, true);
      expect(out.granted).toBe(0);
      expect(out.state.tokens).toBeCloseTo(0.4, 10);
    });

    it('differs from all-or-nothing for the same state', () => {
      const state = { tokens: 10, updatedMs: T0 };
      expect(take(state, T0, rule, 25, false).granted).toBe(0);
      expect(take(state, T0, rule, 25, true).granted).toBe(10);
    });
  });

  describe('msUntilAvailable', () => {
    it('is 0 when the tokens are already there', () => {
      expect(msUntilAvailable(5, 5, rule)).toBe(0);
      expect(msUntilAvailable(50, 1, rule)).toBe(0);
    });

    it('is the linear time to refill the missing tokens, rounded up', () => {
      expect(msUntilAvailable(0, 1, rule)).toBe(100);
      expect(msUntilAvailable(0, 10, rule)).toBe(1_000);
      expect(msUntilAvailable(2.5, 5, rule)).toBe(250);
      expect(msUntilAvailable(0, 1, { sustained: 3, burst: 10 })).toBe(334);
    });

    it('is capped at the time to fill the bucket when more than the burst is needed', () => {
      expect(msUntilAvailable(0, 500, rule)).toBe(10_000);
    });

    it('answers a finite wait for a bucket that never refills', () => {
      expect(msUntilAvailable(0, 1, { sustained: 0, burst: 10 })).toBe(60_000);
    });

    it('agrees with refill: after the announced wait the take succeeds', () => {
      const r: BucketRule = { sustained: 7, burst: 13 };
      let state = take(undefined, T0, r, 13, false).state;
      state = take(state, T0 + 333, r, 2, false).state;
      const wait = msUntilAvailable(refill(state, T0 + 333, r).tokens, 5, r);
      expect(take(state, T0 + 333 + wait - 1, r, 5, false).granted).toBe(0);
      expect(take(state, T0 + 333 + wait, r, 5, false).granted).toBe(5);
    });
  });

  it('the default table names every bucket with sustained <= burst', () => {
    expect(Object.keys(DEFAULT_BUCKET_RULES).sort()).toEqual([
      'alias',
      'entitlements',
      'events',
      'forget',
      'heartbeat',
      'purchases',
      'rail_reads_android_store',
      'rail_reads_card_payments',
      'rail_reads_ios_store',
      'reads',
      'sourcemaps',
    ]);
    for (const r of Object.values(DEFAULT_BUCKET_RULES)) {
      expect(r.sustained).toBeGreaterThan(0);
      expect(r.burst).toBeGreaterThanOrEqual(r.sustained);
    }
    expect(Object.isFrozen(DEFAULT_BUCKET_RULES)).toBe(true);
  });
});

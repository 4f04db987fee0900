import { collapseByKey, grantedValidUntil, isActiveAt, strongerFirst, validUntilFor } from '../../libs/entitlements/src/domain/entitlement-rules.js';

const at = (iso: string): number => Math.floor(Date.parse(iso) / 1000);

describe('validUntilFor (grant duration -> validUntil, Unix seconds)', () => {
  const now = at('2026-03-15T10:20:30Z');

  it('P30D and P90D are exact multiples of 24 hours', () => {
    expect(validUntilFor('P30D', now)).toBe(now + 30 * 86_400);
    expect(validUntilFor('P90D', now)).toBe(now + 90 * 86_400);
  });

  it('P1Y is one calendar year in UTC, same time of day', () => {
    expect(validUntilFor('P1Y', now)).toBe(at('2027-03-15T10:20:30Z'));
    // across a leap day: 366 days
    expect(validUntilFor('P1Y', at('2027-06-01T00:00:00Z'))).toBe(at('2028-06-01T00:00:00Z'));
    expect(at('2028-06-01T00:00:00Z') - at('2027-06-01T00:00:00Z')).toBe(366 * 86_400);
  });

  it('P1Y from 29 February ends on 28 February', () => {
    expect(validUntilFor('P1Y', at('2028-02-29T12:00:00Z'))).toBe(at('2029-02-28T12:00:00Z'));
  });

  it('P1Y from 31 December ends on 31 December', () => {
    expect(validUntilFor('P1Y', at('2026-12-31T23:59:59Z'))).toBe(at('2027-12-31T23:59:59Z'));
  });

  it('lifetime has no end', () => {
    expect(validUntilFor('lifetime', now)).toBeNull();
  });
});

describe('isActiveAt', () => {
  const end = 1_800_000_000;
  it('active until validUntil, inactive from it on', () => {
    expect(isActiveAt('active', end, end * 1000 - 1)).toBe(true);
    expect(isActiveAt('active', end, end * 1000)).toBe(false);
    expect(isActiveAt('active', end, end * 1000 + 1)).toBe(false);
  });
  it('lifetime stays active; revoked and expired never are', () => {
    expect(isActiveAt('active', null, Number.MAX_SAFE_INTEGER)).toBe(true);
    expect(isActiveAt('revoked', null, 0)).toBe(false);
    expect(isActiveAt('revoked', end, 0)).toBe(false);
    expect(isActiveAt('expired', end, 0)).toBe(false);
  });
});

describe('grantedValidUntil (grant on an existing manual entitlement)', () => {
  it('a first grant or a grant on an inactive one starts afresh', () => {
    expect(grantedValidUntil(null, 100)).toBe(100);
    expect(grantedValidUntil({ active: false, validUntil: 500 }, 100)).toBe(100);
    expect(grantedValidUntil({ active: false, validUntil: null }, 100)).toBe(100);
    expect(grantedValidUntil(null, null)).toBeNull();
  });
  it('never shortens an active one: the later end wins, lifetime beats any date', () => {
    expect(grantedValidUntil({ active: true, validUntil: 500 }, 100)).toBe(500);
    expect(grantedValidUntil({ active: true, validUntil: 100 }, 500)).toBe(500);
    expect(grantedValidUntil({ active: true, validUntil: null }, 500)).toBeNull();
    expect(grantedValidUntil({ active: true, validUntil: 500 }, null)).toBeNull();
  });
});

describe('collapseByKey (one entry per key in reads)', () => {
  const e = (key: string, validUntil: number | null, updatedAt: number, rail = 'manual') => ({ key, validUntil, updatedAt, rail });

  it('keeps the strongest entry of each key and sorts by key', () => {
    const result = collapseByKey([e('pro', 100, 1, 'ios_store'), e('basic', 50, 1), e('pro', null, 1, 'manual'), e('pro', 200, 5, 'card_payments')]);
    expect(result.map((x) => [x.key, x.rail])).toEqual([
      ['basic', 'manual'],
      ['pro', 'manual'],
    ]);
  });

  it('between dated entries the later end wins, then the newer write', () => {
    expect(collapseByKey([e('pro', 100, 9, 'a'), e('pro', 200, 1, 'b')])[0].rail).toBe('b');
    expect(collapseByKey([e('pro', 100, 1, 'a'), e('pro', 100, 9, 'b')])[0].rail).toBe('b');
    expect(strongerFirst(e('x', null, 0), e('x', 1, 0))).toBeLessThan(0);
  });

  it('leaves an empty list empty', () => {
    expect(collapseByKey([])).toEqual([]);
  });
});

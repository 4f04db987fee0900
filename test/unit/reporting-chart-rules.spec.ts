import { addDays, dayNumber, periodEnd, periodStart, periodsOf, resolveRange } from '../../libs/reporting/src/charts/chart-periods.js';
import { limitSegments, seriesOf, tabulate } from '../../libs/reporting/src/charts/chart-series.js';
import { classifyMovement, mrrMovements, netMovement } from '../../libs/reporting/src/revenue/mrr-movements.js';

describe('chart periods', () => {
  it('reads only real calendar days', () => {
    expect(dayNumber('2026-02-28')).not.toBeNull();
    expect(dayNumber('2024-02-29')).not.toBeNull();
    for (const bad of ['2026-02-29', '2026-13-01', '2026-1-01', '20261201', '', '2026-12-01T00:00:00Z']) expect(dayNumber(bad)).toBeNull();
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
  });

  it('weeks start on Monday (UTC), months on the 1st', () => {
    // 2026-12-07 is a Monday.
    expect(periodStart('2026-12-07', 'week')).toBe('2026-12-07');
    expect(periodStart('2026-12-13', 'week')).toBe('2026-12-07');
    expect(periodStart('2026-12-14', 'week')).toBe('2026-12-14');
    expect(periodStart('2027-01-01', 'week')).toBe('2026-12-28');
    expect(periodEnd('2026-12-09', 'week')).toBe('2026-12-13');
    expect(periodStart('2026-12-31', 'month')).toBe('2026-12-01');
    expect(periodEnd('2024-02-10', 'month')).toBe('2024-02-29');
    expect(periodEnd('2026-02-10', 'month')).toBe('2026-02-28');
    expect(periodStart('2026-12-09', 'day')).toBe('2026-12-09');
  });

  it('periods cover the range, named by their first day, the ends clipped to it', () => {
    expect(periodsOf('2026-12-09', '2026-12-22', 'week')).toEqual([
      { period: '2026-12-07', first: '2026-12-09', last: '2026-12-13' },
      { period: '2026-12-14', first: '2026-12-14', last: '2026-12-20' },
      { period: '2026-12-21', first: '2026-12-21', last: '2026-12-22' },
    ]);
    expect(periodsOf('2026-11-15', '2027-01-02', 'month').map((p) => [p.period, p.first, p.last])).toEqual([
      ['2026-11-01', '2026-11-15', '2026-11-30'],
      ['2026-12-01', '2026-12-01', '2026-12-31'],
      ['2027-01-01', '2027-01-01', '2027-01-02'],
    ]);
    expect(periodsOf('2026-12-01', '2026-12-03', 'day').map((p) => p.period)).toEqual(['2026-12-01', '2026-12-02', '2026-12-03']);
    expect(periodsOf('2025-01-01', '2026-12-31', 'day')).toHaveLength(730);
  });

  it('ranges: the 30 days ending today by default, at most 731 days, from ≤ to, the field at fault named', () => {
    expect(resolveRange({}, '2026-12-07')).toEqual({ from: '2026-11-08', to: '2026-12-07' });
    expect(resolveRange({ to: '2026-01-30' }, '2026-12-07')).toEqual({ from: '2026-01-01', to: '2026-01-30' });
    expect(resolveRange({ from: '2026-12-01' }, '2026-12-07')).toEqual({ from: '2026-12-01', to: '2026-12-07' });
    expect(resolveRange({ from: '2024-12-07', to: '2026-12-07' }, '2026-12-07')).toEqual({ from: '2024-12-07', to: '2026-12-07' });
    expect(resolveRange({ from: '2024-12-06', to: '2026-12-07' }, '2026-12-07')).toEqual({ field: 'from', message: 'from and to must span at most 731 days' });
    expect(resolveRange({ from: '2026-12-08', to: '2026-12-07' }, '2026-12-07')).toEqual({ field: 'from', message: 'from must be on or before to' });
    expect(resolveRange({ to: '2026-02-30' }, '2026-12-07')).toEqual({ field: 'to', message: 'to must be a date YYYY-MM-DD' });
    expect(resolveRange({ from: 'yesterday' }, '2026-12-07')).toEqual({ field: 'from', message: 'from must be a date YYYY-MM-DD' });
  });
});

describe('MRR movements', () => {
  const row = (rail: string, productId: string, monthlyMinor: number, currency = 'USD') => ({ rail, productId, currency, monthlyMinor });
  const total = (movements: ReturnType<typeof mrrMovements>, currency = 'USD') => movements.find((m) => m.rail === 'all' && m.currency === currency);

  it('classifies a customer’s change of total MRR', () => {
    expect(classifyMovement(0, 1000, false)?.up).toBe('new');
    expect(classifyMovement(0, 1000, true)?.up).toBe('reactivation');
    expect(classifyMovement(1000, 0, true)?.down).toBe('churned');
    expect(classifyMovement(1000, 1500, true)?.up).toBe('expansion');
    expect(classifyMovement(1500, 1000, true)?.down).toBe('contraction');
    expect(classifyMovement(1000, 1000, true)).toBeNull();
    expect(classifyMovement(0, 0, true)).toBeNull();
  });

  it('a first subscription is new at every key level; one after a churn is reactivation', () => {
    const first = mrrMovements([], [row('card_payments', 'prod_pro', 1000)], false);
    expect(first.map((m) => [m.rail, m.productId, m.newMinor])).toEqual([
      ['all', '*', 1000],
      ['card_payments', '*', 1000],
      ['card_payments', 'prod_pro', 1000],
    ]);
    expect(total(mrrMovements([], [row('ios_store', 'p', 500)], true))).toEqual(expect.objectContaining({ reactivationMinor: 500, newMinor: 0 }));
    expect(total(mrrMovements([row('ios_store', 'p', 500)], [], true))).toEqual(expect.objectContaining({ churnedMinor: 500 }));
  });

  it('a plan change: the total moves by its net, each product by its own delta', () => {
    const moves = mrrMovements([row('card_payments', 'basic', 1000)], [row('card_payments', 'pro', 2500)], true);
    expect(total(moves)).toEqual(expect.objectContaining({ expansionMinor: 1500, contractionMinor: 0 }));
    expect(moves.find((m) => m.productId === 'basic')).toEqual(expect.objectContaining({ contractionMinor: 1000 }));
    expect(moves.find((m) => m.productId === 'pro')).toEqual(expect.objectContaining({ expansionMinor: 2500 }));
    // Same price, other product: the total does not move, the products do.
    const swap = mrrMovements([row('card_payments', 'a', 1000)], [row('card_payments', 'b', 1000)], true);
    expect(total(swap)).toBeUndefined();
    expect(swap.find((m) => m.rail === 'card_payments' && m.productId === '*')).toBeUndefined();
    expect(swap.map((m) => netMovement(m)).reduce((a, b) => a + b, 0)).toBe(0);
  });

  it('currencies move apart; every key keeps end = start + movement', () => {
    const before = [row('card_payments', 'a', 1000), row('ios_store', 'b', 700, 'EUR')];
    const after = [row('card_payments', 'a', 400), row('android_store', 'c', 300)];
    const moves = mrrMovements(before, after, true);
    expect(total(moves, 'USD')).toEqual(expect.objectContaining({ contractionMinor: 300 }));
    expect(total(moves, 'EUR')).toEqual(expect.objectContaining({ churnedMinor: 700 }));
    for (const m of moves) {
      const match = (r: { rail: string; productId: string; currency: string }) =>
        r.currency === m.currency && (m.rail === 'all' || r.rail === m.rail) && (m.productId === '*' || r.productId === m.productId);
      const sum = (rows: typeof before) => rows.filter(match).reduce((s, r) => s + r.monthlyMinor, 0);
      expect(sum(before) + netMovement(m)).toBeCloseTo(sum(after));
      for (const v of [m.newMinor, m.expansionMinor, m.contractionMinor, m.churnedMinor, m.reactivationMinor]) expect(v).toBeGreaterThanOrEqual(0);
    }
  });
});

describe('chart series', () => {
  const periods = periodsOf('2026-12-01', '2026-12-04', 'day');

  it('carries a balance from the opening through periods; a period not measured is null but still moves it', () => {
    const table = tabulate([
      { period: null, seg: '', sums: { n: 5 } },
      { period: '2026-12-02', seg: '', sums: { n: 2 } },
      { period: '2026-12-03', seg: '', sums: { n: -1 } },
    ]);
    const series = seriesOf(
      table.get(''),
      periods,
      (p) => p.first >= '2026-12-02' && p.first <= '2026-12-03',
      ['v'],
      (balance, s) => ({ v: (balance.n ?? 0) + (s.n ?? 0) }),
      (balance, s) => {
        balance.n = (balance.n ?? 0) + (s.n ?? 0);
      },
    );
    expect(series).toEqual([{ v: null }, { v: 7 }, { v: 6 }, { v: null }]);
  });

  it('keeps the largest segments and folds the rest and the unknown into other', () => {
    const rows = [
      { period: '2026-12-01', seg: '', sums: { x: 100 } },
      { period: '2026-12-01', seg: 'a', sums: { x: 50 } },
      { period: '2026-12-01', seg: 'b', sums: { x: 30 } },
      { period: '2026-12-01', seg: 'c', sums: { x: 20 } },
    ];
    const limited = limitSegments(
      rows,
      (s) => s.x,
      (r) => r.seg === '',
      2,
    );
    expect(limited.map((r) => r.seg)).toEqual(['', 'a', 'b', 'other']);
  });
});

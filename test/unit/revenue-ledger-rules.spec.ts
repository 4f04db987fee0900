import { androidPriceLines, cardInvoicePayment, cardPriceLines, iosPayment, iosPriceLines } from '../../libs/rails/src/model/rail-prices.js';
import {
  dayOf,
  inferPeriod,
  minorUnitDigits,
  monthOf,
  monthlyMinorOfLine,
  monthlyPrice,
  periodsPerMonth,
  toMinorUnits,
} from '../../libs/reporting/src/revenue/price-normalisation.js';
import { totalsDeltas } from '../../libs/reporting/src/revenue/revenue-deltas.js';

const DAY = 86_400_000;

describe('price normalisation', () => {
  it('minor units follow the currency’s ISO 4217 digits', () => {
    expect([minorUnitDigits('USD'), minorUnitDigits('JPY'), minorUnitDigits('KWD')]).toEqual([2, 0, 3]);
    expect(toMinorUnits({ minor: 999 }, 'USD')).toBe(999);
    expect(toMinorUnits({ micros: 9_990_000 }, 'USD')).toBeCloseTo(999);
    expect(toMinorUnits({ micros: 1_200_000_000 }, 'JPY')).toBeCloseTo(1200);
    expect(toMinorUnits({ micros: 2_500_000 }, 'KWD')).toBeCloseTo(2500);
  });

  it('periods per month: a year is a twelfth, a week about 4.35, every n-th period divides', () => {
    expect(periodsPerMonth('month', 1)).toBe(1);
    expect(periodsPerMonth('month', 3)).toBeCloseTo(1 / 3);
    expect(periodsPerMonth('year', 1)).toBeCloseTo(1 / 12);
    expect(periodsPerMonth('week', 1)).toBeCloseTo(365.25 / 12 / 7);
    expect(periodsPerMonth('day', 1)).toBeCloseTo(365.25 / 12);
    expect(periodsPerMonth('week', 2)).toBeCloseTo(365.25 / 12 / 14);
  });

  it('a store period is inferred from its length (nearest by ratio); none is a month', () => {
    expect(inferPeriod(28 * DAY)).toEqual({ unit: 'month', count: 1 });
    expect(inferPeriod(31 * DAY)).toEqual({ unit: 'month', count: 1 });
    expect(inferPeriod(7 * DAY)).toEqual({ unit: 'week', count: 1 });
    expect(inferPeriod(92 * DAY)).toEqual({ unit: 'month', count: 3 });
    expect(inferPeriod(183 * DAY)).toEqual({ unit: 'month', count: 6 });
    expect(inferPeriod(366 * DAY)).toEqual({ unit: 'year', count: 1 });
    expect(inferPeriod(null)).toEqual({ unit: 'month', count: 1 });
    expect(inferPeriod(-5)).toEqual({ unit: 'month', count: 1 });
  });

  it('a subscription’s monthly price sums its lines in its currency, quantity included', () => {
    const line = (amount: number, unit: 'month' | 'year', quantity = 1, currency = 'USD') => ({
      currency,
      amount: { minor: amount },
      quantity,
      period: { unit, count: 1 },
      periodMs: null,
    });
    expect(monthlyMinorOfLine(line(1000, 'month', 3))).toBe(3000);
    expect(monthlyPrice([line(1000, 'month', 2), line(12000, 'year')])).toEqual({ currency: 'USD', monthlyMinor: 3000 });
    // A line in another currency is left out, never converted.
    expect(monthlyPrice([line(1000, 'month'), line(900, 'month', 1, 'EUR')])).toEqual({ currency: 'USD', monthlyMinor: 1000 });
    expect(monthlyPrice(null)).toBeNull();
    expect(monthlyPrice([])).toBeNull();
    // A store price over an inferred year.
    expect(monthlyPrice([{ currency: 'USD', amount: { micros: 99_990_000 }, quantity: 1, period: null, periodMs: 365 * DAY }])?.monthlyMinor).toBeCloseTo(
      833.25,
    );
  });

  it('UTC days and months', () => {
    const ms = Date.parse('2026-11-29T23:59:59Z');
    expect(dayOf(ms)).toBe('2026-11-29');
    expect(monthOf(ms)).toBe('2026-11-01');
  });
});

describe('rail prices', () => {
  it('card: fixed-price items with their interval and quantity; metered or unpriced items are left out', () => {
    const lines = cardPriceLines({
      items: {
        data: [
          { quantity: 3, price: { unit_amount: 500, currency: 'eur', recurring: { interval: 'month', interval_count: 1 } } },
          { price: { unit_amount: 10000, currency: 'eur', recurring: { interval: 'year', interval_count: 2 } } },
          { price: { unit_amount: null, currency: 'eur', recurring: { interval: 'month' } } },
          { price: { unit_amount: 100, currency: 'eur' } },
        ],
      },
    });
    expect(lines).toEqual([
      { currency: 'EUR', amount: { minor: 500 }, quantity: 3, period: { unit: 'month', count: 1 }, periodMs: null },
      { currency: 'EUR', amount: { minor: 10000 }, quantity: 1, period: { unit: 'year', count: 2 }, periodMs: null },
    ]);
    expect(cardPriceLines({ items: { data: [] } })).toBeNull();
  });

  it('card invoice.paid: the paid amount, recurring when it bills a subscription', () => {
    expect(cardInvoicePayment({ id: 'in_1', amount_paid: 2500, currency: 'usd', subscription: 'sub_1', status_transitions: { paid_at: 100 } }, 50)).toEqual({
      transactionId: 'in_1',
      currency: 'USD',
      amount: { minor: 2500 },
      recurring: true,
      paidAtMs: 100_000,
      subscriptionId: 'sub_1',
    });
    expect(cardInvoicePayment({ id: 'in_2', amount_paid: 700, currency: 'usd' }, 50)).toEqual(
      expect.objectContaining({ recurring: false, paidAtMs: 50_000, subscriptionId: null }),
    );
    expect(cardInvoicePayment({ id: 'in_3', amount_paid: 0, currency: 'usd' }, 50)).toBeNull();
  });

  it('iOS: price in milli-units over purchase → expiry; paid unrevoked transactions are cash', () => {
    const tx = { transactionId: '1', type: 'Auto-Renewable Subscription', price: 9990, currency: 'usd', purchaseDate: 0, expiresDate: 30 * DAY };
    expect(iosPriceLines(tx)).toEqual([{ currency: 'USD', amount: { micros: 9_990_000 }, quantity: 1, period: null, periodMs: 30 * DAY }]);
    expect(iosPayment(tx)).toEqual({ transactionId: '1', currency: 'USD', amount: { micros: 9_990_000 }, recurring: true, paidAtMs: 0 });
    expect(iosPriceLines({ ...tx, expiresDate: undefined })).toBeNull();
    expect(iosPayment({ ...tx, type: 'Non-Consumable', expiresDate: undefined })).toEqual(expect.objectContaining({ recurring: false }));
    expect(iosPayment({ ...tx, revocationDate: 5 })).toBeNull();
    expect(iosPayment({ ...tx, price: 0 })).toBeNull();
  });

  it('Android: the recurring price (units + nanos), the period from the base plan or the item’s length', () => {
    const lines = androidPriceLines(
      [
        {
          expiryTime: '2026-02-01T00:00:00Z',
          autoRenewingPlan: { recurringPrice: { currencyCode: 'GBP', units: '4', nanos: 990_000_000 } },
          offerDetails: { basePlanId: 'annual-plan' },
        },
        { expiryTime: '2026-01-31T00:00:00Z', autoRenewingPlan: { recurringPrice: { currencyCode: 'GBP', units: 2 } } },
        { expiryTime: '2026-01-31T00:00:00Z' },
      ],
      '2026-01-01T00:00:00Z',
    );
    expect(lines).toEqual([
      { currency: 'GBP', amount: { micros: 4_990_000 }, quantity: 1, period: { unit: 'year', count: 1 }, periodMs: 31 * DAY },
      { currency: 'GBP', amount: { micros: 2_000_000 }, quantity: 1, period: null, periodMs: 30 * DAY },
    ]);
    expect(androidPriceLines([], null)).toBeNull();
  });
});

describe('ledger totals', () => {
  const row = (rail: 'ios_store' | 'card_payments', currency: string, monthlyMinor: number) => ({ rail, currency, monthlyMinor, subscriptions: 1 });
  const byKey = (deltas: ReturnType<typeof totalsDeltas>) =>
    Object.fromEntries(deltas.map((d) => [`${d.rail}|${d.currency}`, [d.mrrMinor, d.payingCustomers]]));

  it('a first paid subscription counts the customer once per rail, currency and overall', () => {
    expect(byKey(totalsDeltas([], [row('card_payments', 'USD', 3000)]))).toEqual({
      'card_payments|USD': [3000, 1],
      'all|USD': [3000, 1],
      'card_payments|*': [0, 1],
      'all|*': [0, 1],
    });
  });

  it('a second rail adds MRR but not the customer overall; a price change moves MRR only; ending removes all', () => {
    const before = [row('card_payments', 'USD', 3000)];
    expect(byKey(totalsDeltas(before, [...before, row('ios_store', 'USD', 999)]))).toEqual({
      'ios_store|USD': [999, 1],
      'all|USD': [999, 0],
      'ios_store|*': [0, 1],
    });
    expect(byKey(totalsDeltas(before, [row('card_payments', 'USD', 4000)]))).toEqual({ 'card_payments|USD': [1000, 0], 'all|USD': [1000, 0] });
    expect(byKey(totalsDeltas(before, []))).toEqual({
      'card_payments|USD': [-3000, -1],
      'all|USD': [-3000, -1],
      'card_payments|*': [0, -1],
      'all|*': [0, -1],
    });
    expect(totalsDeltas(before, before)).toEqual([]);
  });
});

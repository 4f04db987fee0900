/**
 * Rail prices to monthly amounts in minor units of their currency. Pure. No exchange rates:
 * each currency stays its own.
 */
import type { BillingPeriodUnit, RailAmount, RailPriceLine } from '#rails';

/** ISO 4217 currencies without minor units, and those with three decimals; every other has two. */
const ZERO_DECIMAL = new Set(['BIF', 'CLP', 'DJF', 'GNF', 'ISK', 'JPY', 'KMF', 'KRW', 'PYG', 'RWF', 'UGX', 'UYI', 'VND', 'VUV', 'XAF', 'XOF', 'XPF']);
const THREE_DECIMAL = new Set(['BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND']);

export function minorUnitDigits(currency: string): number {
  if (ZERO_DECIMAL.has(currency)) return 0;
  return THREE_DECIMAL.has(currency) ? 3 : 2;
}

/** An amount in minor units of `currency` (millionths of the major unit scaled by its digits). */
export function toMinorUnits(amount: RailAmount, currency: string): number {
  if ('minor' in amount) return amount.minor;
  return (amount.micros / 1_000_000) * 10 ** minorUnitDigits(currency);
}

const DAYS_PER_MONTH = 365.25 / 12;
const DAY_MS = 86_400_000;

/** How many of one billing period fit in a month. */
export function periodsPerMonth(unit: BillingPeriodUnit, count: number): number {
  const n = Math.max(1, count);
  switch (unit) {
    case 'day':
      return DAYS_PER_MONTH / n;
    case 'week':
      return DAYS_PER_MONTH / (7 * n);
    case 'month':
      return 1 / n;
    case 'year':
      return 1 / (12 * n);
  }
}

/** The billing periods stores sell, by length in days. */
const STORE_PERIODS: { unit: BillingPeriodUnit; count: number; days: number }[] = [
  { unit: 'week', count: 1, days: 7 },
  { unit: 'week', count: 2, days: 14 },
  { unit: 'month', count: 1, days: DAYS_PER_MONTH },
  { unit: 'month', count: 2, days: 2 * DAYS_PER_MONTH },
  { unit: 'month', count: 3, days: 3 * DAYS_PER_MONTH },
  { unit: 'month', count: 6, days: 6 * DAYS_PER_MONTH },
  { unit: 'year', count: 1, days: 365.25 },
];

/**
 * The store period nearest (by ratio) to a period's length: a month that ran 28 or 31 days, a
 * year of 365 or 366 days. Without a length: a month.
 */
export function inferPeriod(periodMs: number | null): { unit: BillingPeriodUnit; count: number } {
  if (periodMs === null || !(periodMs > 0)) return { unit: 'month', count: 1 };
  const days = periodMs / DAY_MS;
  let best = STORE_PERIODS[2];
  for (const period of STORE_PERIODS) {
    if (Math.abs(Math.log(days / period.days)) < Math.abs(Math.log(days / best.days))) best = period;
  }
  return { unit: best.unit, count: best.count };
}

/** One line's amount per month in minor units. */
export function monthlyMinorOfLine(line: RailPriceLine): number {
  const period = line.period ?? inferPeriod(line.periodMs);
  return toMinorUnits(line.amount, line.currency) * Math.max(0, line.quantity) * periodsPerMonth(period.unit, period.count);
}

/**
 * A subscription's monthly price: the sum of its lines in the first line's currency (a
 * subscription bills in one currency; lines in another are left out, never converted).
 */
export function monthlyPrice(lines: readonly RailPriceLine[] | null): { currency: string; monthlyMinor: number } | null {
  if (!lines || lines.length === 0) return null;
  const currency = lines[0].currency;
  const monthlyMinor = lines.filter((line) => line.currency === currency).reduce((sum, line) => sum + monthlyMinorOfLine(line), 0);
  return { currency, monthlyMinor: Math.round(monthlyMinor * 10_000) / 10_000 };
}

/** The first day (UTC) of the month of `ms`, as `YYYY-MM-01`. */
export function monthOf(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 7)}-01`;
}

/** The UTC date of `ms`, as `YYYY-MM-DD`. */
export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

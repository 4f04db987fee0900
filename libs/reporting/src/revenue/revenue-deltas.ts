/**
 * How one customer's change moves the ledger's totals. Pure: given the customer's rows before
 * and after (per rail and currency), the deltas of MRR (per rail and currency, and over every
 * rail) and of paying customers (per rail and currency, per rail in any currency, per currency
 * over every rail, and overall).
 */
import type { CustomerRevenueRow, TotalsDelta } from './revenue-ledger.repository.js';
import { ANY_CURRENCY } from './revenue-ledger.repository.js';

export function totalsDeltas(before: readonly CustomerRevenueRow[], after: readonly CustomerRevenueRow[]): TotalsDelta[] {
  const deltas = new Map<string, TotalsDelta>();
  const add = (rail: TotalsDelta['rail'], currency: string, mrrMinor: number, payingCustomers: number): void => {
    const key = `${rail}|${currency}`;
    const current = deltas.get(key) ?? { rail, currency, mrrMinor: 0, payingCustomers: 0 };
    current.mrrMinor += mrrMinor;
    current.payingCustomers += payingCustomers;
    deltas.set(key, current);
  };
  const keysOf = (rows: readonly CustomerRevenueRow[]) => {
    const keys = new Set<string>();
    for (const row of rows) {
      keys.add(`${row.rail}|${row.currency}`);
      keys.add(`${row.rail}|${ANY_CURRENCY}`);
      keys.add(`all|${row.currency}`);
      keys.add(`all|${ANY_CURRENCY}`);
    }
    return keys;
  };
  for (const row of before) {
    add(row.rail, row.currency, -row.monthlyMinor, 0);
    add('all', row.currency, -row.monthlyMinor, 0);
  }
  for (const row of after) {
    add(row.rail, row.currency, row.monthlyMinor, 0);
    add('all', row.currency, row.monthlyMinor, 0);
  }
  const was = keysOf(before);
  const is = keysOf(after);
  for (const key of new Set([...was, ...is])) {
    const [rail, currency] = key.split('|') as [TotalsDelta['rail'], string];
    add(rail, currency, 0, (is.has(key) ? 1 : 0) - (was.has(key) ? 1 : 0));
  }
  return [...deltas.values()].filter((d) => Math.abs(d.mrrMinor) > 1e-9 || d.payingCustomers !== 0);
}

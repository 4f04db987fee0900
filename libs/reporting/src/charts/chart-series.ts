/**
 * From fact sums to chart values. Pure: rows of sums per segment and period (null period: the
 * opening balance before the range) become per-period values; a period not measured is null.
 */
import type { ChartPeriod } from './chart-periods.js';

export type Sums = Record<string, number>;
export type Values = Record<string, number | null>;

export interface SumRow {
  period: string | null;
  seg: string;
  sums: Sums;
}

/** One segment's sums: the opening balance and each period's. */
export interface SegmentSums {
  opening: Sums;
  periods: Map<string, Sums>;
}

/** The largest segments a `segment=product` chart lists; the rest (and an unknown product) are `other`. */
export const MAX_SEGMENTS = 20;
export const OTHER_SEGMENT = 'other';

function add(into: Sums, from: Sums): Sums {
  for (const [name, value] of Object.entries(from)) into[name] = (into[name] ?? 0) + value;
  return into;
}

/** Rows grouped by segment (`''` the total), their sums added up. */
export function tabulate(rows: readonly SumRow[]): Map<string, SegmentSums> {
  const table = new Map<string, SegmentSums>();
  for (const row of rows) {
    let entry = table.get(row.seg);
    if (!entry) table.set(row.seg, (entry = { opening: {}, periods: new Map() }));
    if (row.period === null) add(entry.opening, row.sums);
    else entry.periods.set(row.period, add(entry.periods.get(row.period) ?? {}, row.sums));
  }
  return table;
}

/** The sum of every segment but the total. */
export function sumSegments(table: Map<string, SegmentSums>): SegmentSums {
  const total: SegmentSums = { opening: {}, periods: new Map() };
  for (const [seg, entry] of table) {
    if (seg === '') continue;
    add(total.opening, entry.opening);
    for (const [period, sums] of entry.periods) total.periods.set(period, add(total.periods.get(period) ?? {}, sums));
  }
  return total;
}

/**
 * Renames segments beyond the `max` largest (by `size` of their rows, summed) and the unknown
 * one (`''` among segments) to `other`. The total's rows (`isTotal`) keep their key.
 */
export function limitSegments(rows: readonly SumRow[], size: (sums: Sums) => number, isTotal: (row: SumRow) => boolean, max = MAX_SEGMENTS): SumRow[] {
  const sizes = new Map<string, number>();
  for (const row of rows) if (!isTotal(row) && row.seg !== '') sizes.set(row.seg, (sizes.get(row.seg) ?? 0) + size(row.sums));
  const kept = new Set(
    [...sizes.entries()]
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .slice(0, max)
      .map(([seg]) => seg),
  );
  return rows.map((row) => (isTotal(row) || kept.has(row.seg) ? row : { ...row, seg: OTHER_SEGMENT }));
}

/**
 * Per-period values of one segment: `compute` gets the running balance (opening plus every
 * period before, `carry` names the balances carried), the period's sums and the period; a period not
 * measured is all null (its sums still move the balance).
 */
export function seriesOf(
  entry: SegmentSums | undefined,
  periods: readonly ChartPeriod[],
  measured: (p: ChartPeriod) => boolean,
  names: readonly string[],
  compute: (balance: Sums, sums: Sums, period: ChartPeriod) => Values,
  carry: (balance: Sums, sums: Sums) => void = () => undefined,
): Values[] {
  const balance: Sums = { ...(entry?.opening ?? {}) };
  return periods.map((p) => {
    const sums = entry?.periods.get(p.period) ?? {};
    const values = measured(p) ? compute({ ...balance }, sums, p) : Object.fromEntries(names.map((n) => [n, null]));
    carry(balance, sums);
    return values;
  });
}

/** A sum's value (0 when absent). */
export const sumOf = (sums: Sums, name: string): number => sums[name] ?? 0;

/** The ratio of two figures, null when the divisor is 0 or a figure is null. */
export function ratio(numerator: number | null, denominator: number | null): number | null {
  if (numerator === null || denominator === null || denominator === 0) return null;
  return numerator / denominator;
}

/** The sum of a value over the measured periods, null when none is. */
export function total(series: readonly Values[], name: string): number | null {
  const known = series.map((v) => v[name]).filter((v): v is number => v !== null && v !== undefined);
  return known.length === 0 ? null : known.reduce((s, v) => s + v, 0);
}

/** The mean of a value over the periods where it is known, null when none is. */
export function mean(series: readonly Values[], name: string): number | null {
  const known = series.map((v) => v[name]).filter((v): v is number => v !== null && v !== undefined);
  return known.length === 0 ? null : known.reduce((s, v) => s + v, 0) / known.length;
}

/** The value of the last period where it is known, null when none is. */
export function last(series: readonly Values[], name: string): number | null {
  for (let i = series.length - 1; i >= 0; i -= 1) {
    const v = series[i][name];
    if (v !== null && v !== undefined) return v;
  }
  return null;
}

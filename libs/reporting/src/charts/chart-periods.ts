/**
 * The periods of a chart read. Pure: dates are UTC calendar days `YYYY-MM-DD`; weeks start on
 * Monday; a period is named by its first day (the Monday, the 1st of the month) and the first
 * and last periods are clipped to the range read.
 */

export const CHART_GRANULARITIES = ['day', 'week', 'month'] as const;
export type ChartGranularity = (typeof CHART_GRANULARITIES)[number];

/** The default range: the 30 days ending today. */
export const DEFAULT_RANGE_DAYS = 30;
/** The longest range a chart reads (two years and a day, both ends included). */
export const MAX_RANGE_DAYS = 731;

const DAY_MS = 86_400_000;
const DAY_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Days since 1970-01-01 of a valid `YYYY-MM-DD`; null for anything else (2026-02-30 included). */
export function dayNumber(day: string): number | null {
  const m = DAY_RE.exec(day);
  if (!m) return null;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return dayString(ms / DAY_MS) === day ? ms / DAY_MS : null;
}

export function dayString(n: number): string {
  return new Date(n * DAY_MS).toISOString().slice(0, 10);
}

export function addDays(day: string, days: number): string {
  return dayString(mustDay(day) + days);
}

function mustDay(day: string): number {
  const n = dayNumber(day);
  if (n === null) throw new Error(`not a day: ${day}`);
  return n;
}

/** The first day of the period holding `day`. */
export function periodStart(day: string, granularity: ChartGranularity): string {
  const n = mustDay(day);
  if (granularity === 'day') return day;
  if (granularity === 'week') return dayString(n - ((new Date(n * DAY_MS).getUTCDay() + 6) % 7));
  return `${day.slice(0, 7)}-01`;
}

/** The last day of the period holding `day`. */
export function periodEnd(day: string, granularity: ChartGranularity): string {
  if (granularity === 'day') return day;
  if (granularity === 'week') return addDays(periodStart(day, 'week'), 6);
  const d = new Date(mustDay(day) * DAY_MS);
  return dayString(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0) / DAY_MS);
}

export interface ChartPeriod {
  /** The period's first day (its name). */
  period: string;
  /** The first and last day of the period inside the range. */
  first: string;
  last: string;
}

/** The periods covering [from, to], oldest first. */
export function periodsOf(from: string, to: string, granularity: ChartGranularity): ChartPeriod[] {
  const periods: ChartPeriod[] = [];
  let day = from;
  while (day <= to) {
    const end = periodEnd(day, granularity);
    periods.push({ period: periodStart(day, granularity), first: day, last: end < to ? end : to });
    day = addDays(end, 1);
  }
  return periods;
}

export type RangeError = { field: 'from' | 'to'; message: string };

/**
 * The range a chart reads: `from`/`to` as given, `to` defaulting to today and `from` to the 30
 * days ending `to`; an error names the field at fault.
 */
export function resolveRange(input: { from?: string; to?: string }, today: string): { from: string; to: string } | RangeError {
  for (const field of ['from', 'to'] as const) {
    const value = input[field];
    if (value !== undefined && dayNumber(value) === null) return { field, message: `${field} must be a date YYYY-MM-DD` };
  }
  const to = input.to ?? today;
  const from = input.from ?? addDays(to, -(DEFAULT_RANGE_DAYS - 1));
  if (from > to) return { field: 'from', message: 'from must be on or before to' };
  if (mustDay(to) - mustDay(from) + 1 > MAX_RANGE_DAYS) return { field: 'from', message: `from and to must span at most ${MAX_RANGE_DAYS} days` };
  return { from, to };
}

export function isRangeError(range: { from: string; to: string } | RangeError): range is RangeError {
  return 'field' in range;
}

// The overview's charts as data: which chart draws which values in which unit, the range a
// preset or the date inputs give, and the rows a chart and its table show. Pure (unit-tested);
// a null value is "not measured" and stays null all the way to the screen, never 0.

export type Granularity = 'day' | 'week' | 'month';
export type Segment = 'none' | 'rail' | 'product';
export type Unit = 'money' | 'percent' | 'count';

export interface ChartPoint {
  period: string;
  values: Record<string, number | null>;
  segments?: Record<string, Record<string, number | null>>;
}
export interface ChartAnswer {
  chart: string;
  currency?: string;
  granularity: string;
  segment: string;
  series: ChartPoint[];
  summary: Record<string, number | null>;
}

export interface SeriesSpec {
  key: string;
  label: string;
  kind: 'line' | 'bar';
  /** Drawn below the axis (a movement that lowers MRR); the table and tooltip show the amount. */
  negative?: boolean;
  /** The right-hand axis (a rate beside counts). */
  right?: boolean;
  /** Bars of one stack sit on each other (MRR movements, segments). */
  stack?: string;
}
export interface ChartSpec {
  chart: OverviewChart;
  title: string;
  unit: Unit;
  /** The unit of the right-hand axis, when a series uses it. */
  rightUnit?: Unit;
  series: SeriesSpec[];
  /** With a segment, the value drawn per rail or product (the chart splits); absent: the chart does not split. */
  split?: { key: string; kind: 'line' | 'bar' };
}

export const OVERVIEW_CHARTS = ['mrr', 'revenue', 'active_subscriptions', 'trials', 'churn', 'refunds', 'new_customers', 'events'] as const;
export type OverviewChart = (typeof OVERVIEW_CHARTS)[number];

export const CHART_SPECS: readonly ChartSpec[] = [
  {
    chart: 'mrr',
    title: 'MRR and its movement',
    unit: 'money',
    series: [
      { key: 'newCents', stack: 'movement', label: 'New', kind: 'bar' },
      { key: 'expansionCents', stack: 'movement', label: 'Expansion', kind: 'bar' },
      { key: 'reactivationCents', stack: 'movement', label: 'Reactivation', kind: 'bar' },
      { key: 'contractionCents', label: 'Contraction', kind: 'bar', stack: 'movement', negative: true },
      { key: 'churnedCents', label: 'Churn', kind: 'bar', stack: 'movement', negative: true },
      { key: 'mrrCents', label: 'MRR', kind: 'line' },
    ],
    split: { key: 'mrrCents', kind: 'line' },
  },
  {
    chart: 'revenue',
    title: 'Revenue',
    unit: 'money',
    series: [
      { key: 'grossCents', label: 'Gross', kind: 'bar' },
      { key: 'refundsCents', label: 'Refunds', kind: 'bar' },
      { key: 'netCents', label: 'Net', kind: 'bar' },
    ],
    split: { key: 'grossCents', kind: 'bar' },
  },
  {
    chart: 'active_subscriptions',
    title: 'Active subscriptions and trials',
    unit: 'count',
    series: [
      { key: 'active', label: 'Active', kind: 'line' },
      { key: 'trialing', label: 'Trialing', kind: 'line' },
      { key: 'inGracePeriod', label: 'Grace period', kind: 'line' },
      { key: 'inBillingRetry', label: 'Billing retry', kind: 'line' },
      { key: 'paused', label: 'Paused', kind: 'line' },
    ],
    split: { key: 'active', kind: 'line' },
  },
  {
    chart: 'trials',
    title: 'Trial conversion',
    unit: 'count',
    rightUnit: 'percent',
    series: [
      { key: 'started', label: 'Trials started', kind: 'bar' },
      { key: 'converted', label: 'Converted', kind: 'bar' },
      { key: 'conversionRate', label: 'Conversion rate', kind: 'line', right: true },
    ],
  },
  {
    chart: 'churn',
    title: 'Churn rate',
    unit: 'percent',
    series: [
      { key: 'subscriberChurnRate', label: 'Subscriber churn', kind: 'line' },
      { key: 'mrrChurnRate', label: 'MRR churn', kind: 'line' },
    ],
  },
  {
    chart: 'refunds',
    title: 'Refund rate',
    unit: 'percent',
    series: [{ key: 'refundRate', label: 'Refund rate', kind: 'line' }],
  },
  {
    chart: 'new_customers',
    title: 'New customers',
    unit: 'count',
    rightUnit: 'percent',
    series: [
      { key: 'newCustomers', label: 'New customers', kind: 'bar' },
      { key: 'newPaying', label: 'First payments', kind: 'bar' },
      { key: 'conversionToPaying', label: 'Conversion to paying', kind: 'line', right: true },
    ],
  },
  {
    chart: 'events',
    title: 'Events',
    unit: 'count',
    series: [
      { key: 'events', label: 'Events', kind: 'bar' },
      { key: 'errors', label: 'Errors', kind: 'bar' },
      { key: 'uniqueUsers', label: 'Active customers', kind: 'line' },
    ],
  },
];

const DAY_MS = 86_400_000;
export const MAX_RANGE_DAYS = 731;
export const PRESETS = [7, 30, 90, 365] as const;

export function today(nowMs: number): string {
  return new Date(nowMs).toISOString().slice(0, 10);
}

export function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/** The `days` days ending `to`, both included. */
export function presetRange(days: number, to: string): { from: string; to: string } {
  return { from: addDays(to, -(days - 1)), to };
}

/** The preset a range is, if any (its length in days when it ends today). */
export function presetOf(range: { from: string; to: string }, todayDay: string): number | undefined {
  if (range.to !== todayDay) return undefined;
  return PRESETS.find((days) => presetRange(days, todayDay).from === range.from);
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** What is wrong with a range, naming the field (shown next to it); undefined when it can be read. */
export function rangeError(range: { from: string; to: string }): { field: 'from' | 'to'; message: string } | undefined {
  for (const field of ['from', 'to'] as const)
    if (!DATE.test(range[field]) || Number.isNaN(Date.parse(`${range[field]}T00:00:00Z`)))
      return { field, message: `${field === 'from' ? 'From' : 'To'} must be a date` };
  if (range.from > range.to) return { field: 'from', message: 'From must be on or before To' };
  const days = (Date.parse(`${range.to}T00:00:00Z`) - Date.parse(`${range.from}T00:00:00Z`)) / DAY_MS + 1;
  if (days > MAX_RANGE_DAYS) return { field: 'from', message: `The range spans at most ${MAX_RANGE_DAYS} days` };
  return undefined;
}

/** One drawn series: a value key of the rows, its label and how it is drawn. */
export interface Drawn extends SeriesSpec {
  dataKey: string;
}

/** The series a chart draws: its own values, or with a segment the split value per rail or product. */
export function drawnSeries(spec: ChartSpec, answer: ChartAnswer): Drawn[] {
  if (spec.split && answer.segment !== 'none') {
    const names = new Set<string>();
    for (const point of answer.series) for (const name of Object.keys(point.segments ?? {})) names.add(name);
    const base = spec.series.find((s) => s.key === spec.split!.key)!;
    return [...names].map((name) => ({
      key: spec.split!.key,
      label: `${base.label}: ${segmentLabel(name)}`,
      kind: spec.split!.kind,
      stack: 'segments',
      dataKey: `seg:${name}`,
    }));
  }
  return spec.series.map((s) => ({ ...s, dataKey: s.key }));
}

export type Row = { period: string } & Record<string, number | null | string>;

/**
 * One row per period: each drawn series' value (null kept), and under `plot:` the value drawn
 * (negative for a movement that lowers MRR).
 */
export function rowsOf(answer: ChartAnswer, drawn: Drawn[]): Row[] {
  return answer.series.map((point) => {
    const row: Row = { period: point.period };
    for (const s of drawn) {
      const value = s.dataKey.startsWith('seg:') ? (point.segments?.[s.dataKey.slice(4)]?.[s.key] ?? null) : (point.values[s.key] ?? null);
      row[s.dataKey] = value;
      row[`plot:${s.dataKey}`] = value === null ? null : s.negative ? -value : value;
    }
    return row;
  });
}

/** A value in its unit: money from cents, a fraction as a percentage, a count; null is "not measured". */
export function formatValue(value: number | null | undefined, unit: Unit, currency = 'USD'): string {
  if (value === null || value === undefined) return 'not measured';
  if (unit === 'money') return new Intl.NumberFormat('en', { style: 'currency', currency }).format(value / 100);
  if (unit === 'percent') return new Intl.NumberFormat('en', { style: 'percent', maximumFractionDigits: 1 }).format(value);
  return new Intl.NumberFormat('en').format(value);
}

/** An axis tick: compact money and counts, whole percentages. */
export function formatTick(value: number, unit: Unit, currency = 'USD'): string {
  if (unit === 'money')
    return new Intl.NumberFormat('en', { style: 'currency', currency, notation: 'compact', minimumFractionDigits: 0, maximumFractionDigits: 1 }).format(
      value / 100,
    );
  if (unit === 'percent') return new Intl.NumberFormat('en', { style: 'percent', maximumFractionDigits: 0 }).format(value);
  return new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 1 }).format(value);
}

/** The axis title: the currency, "%", or what is counted. */
export function unitLabel(unit: Unit, currency = 'USD'): string {
  return unit === 'money' ? currency : unit === 'percent' ? '%' : 'count';
}

/**
 * The period a key moves a chart's keyboard reading to, from `at` among `count` periods: left and
 * right (down and up too) one period, stopping at the ends; Home and End the first and the last.
 * Undefined for any other key.
 */
export function keyTarget(key: string, at: number, count: number): number | undefined {
  if (key === 'ArrowLeft' || key === 'ArrowDown') return Math.max(0, at - 1);
  if (key === 'ArrowRight' || key === 'ArrowUp') return Math.min(count - 1, at + 1);
  if (key === 'Home') return 0;
  if (key === 'End') return count - 1;
  return undefined;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** A period's name on the axis: "Dec 7" for days and weeks (their Monday), "Dec 2026" for months. */
export function periodLabel(period: string, granularity: string): string {
  const month = MONTHS[Number(period.slice(5, 7)) - 1];
  if (granularity === 'month') return `${month} ${period.slice(0, 4)}`;
  return `${month} ${Number(period.slice(8, 10))}`;
}

/** A period in full (tooltips and tables): "2026-12-07", "week of 2026-12-07", "2026-12". */
export function periodName(period: string, granularity: string): string {
  if (granularity === 'month') return period.slice(0, 7);
  if (granularity === 'week') return `week of ${period}`;
  return period;
}

const RAILS: Record<string, string> = { ios_store: 'App Store', card_payments: 'Card payments', android_store: 'Play Store', other: 'Other products' };

export function segmentLabel(name: string): string {
  return RAILS[name] ?? name;
}

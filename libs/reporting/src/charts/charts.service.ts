import { Injectable } from '@nestjs/common';
import { ApiError, Clock, type TenantScope } from '#platform';
import type { AuthContext } from '#keys';
import type { Coverage, CoverageSurface, ReadEnvelope } from '../read-envelope.js';
import { ReportingReads } from '../reporting-reads.service.js';
import { dayOf } from '../revenue/price-normalisation.js';
import { DEFAULT_REPORTING_CURRENCY } from '../revenue/revenue-ledger.service.js';
import { type ChartGranularity, type ChartPeriod, addDays, isRangeError, periodEnd, periodStart, periodsOf, resolveRange } from './chart-periods.js';
import { type SegmentSums, type Sums, type Values, last, limitSegments, mean, ratio, seriesOf, sumOf, sumSegments, tabulate, total } from './chart-series.js';
import { type ChartContext, type ChartSegment, ChartsRepository, type FactRow, STATE_SUMS } from './charts.repository.js';
import type { ChartData, ChartPointView, ChartQueryDto, RevenueFigures, RevenueSummaryData } from './charts.dto.js';

export const CHARTS = ['mrr', 'revenue', 'active_subscriptions', 'trials', 'churn', 'refunds', 'new_customers', 'ltv_cohorts', 'events'] as const;
export type ChartName = (typeof CHARTS)[number];

/** Charts answered in money (cents of the reporting currency): they carry `currency`. */
const MONEY_CHARTS: ReadonlySet<ChartName> = new Set(['mrr', 'revenue', 'refunds', 'ltv_cohorts']);
/** Charts that split by `segment=rail|product`; the others take `segment=none` alone. */
const SEGMENTED_CHARTS: ReadonlySet<ChartName> = new Set(['mrr', 'revenue', 'refunds', 'active_subscriptions']);
/** Refund figures of the revenue chart (measured from the lifecycle's first day, the others from the ledger's). */
const REFUND_VALUES = ['refundsCents', 'netCents'];
/** How many months after its first a cohort's lifetime value runs (m0 … m11). */
const COHORT_MONTHS = 12;

const RAIL_SEGMENTS = ['ios_store', 'card_payments', 'android_store'];
const cents = (minor: number): number => Math.round(minor);
const nulls = (names: readonly string[]): Values => Object.fromEntries(names.map((n) => [n, null]));
const net = (s: Sums) =>
  sumOf(s, 'newMinor') + sumOf(s, 'expansionMinor') + sumOf(s, 'reactivationMinor') - sumOf(s, 'contractionMinor') - sumOf(s, 'churnedMinor');

interface Request {
  scope: TenantScope;
  chart: ChartName;
  from: string;
  to: string;
  today: string;
  granularity: ChartGranularity;
  segment: ChartSegment;
  periods: ChartPeriod[];
  context: ChartContext;
  currency: string;
}

/** A chart's series for the total and each segment, and its summary. */
interface Built {
  total: Values[];
  segments?: Map<string, Values[]>;
  summary: Values;
}

/** `GET /v1/charts/{chart}`: time series read from the per-day facts the ledger, the lifecycle and the event rollups keep. */
@Injectable()
export class ChartsService {
  constructor(
    private readonly reads: ReportingReads,
    private readonly repository: ChartsRepository,
    private readonly clock: Clock,
  ) {}

  async chart(auth: AuthContext, chart: ChartName, query: ChartQueryDto): Promise<ReadEnvelope<ChartData>> {
    const plan = this.plan(chart, query);
    return this.reads.read(auth, 'chart', () => this.answer(auth, plan));
  }

  /**
   * The operator API's read of one project and environment: the same answer as the public
   * route's, without a key (no `reads` bucket; the operator routes have their own limits).
   */
  async operatorChart(scope: TenantScope, chart: ChartName, query: ChartQueryDto): Promise<ReadEnvelope<ChartData>> {
    const plan = this.plan(chart, query);
    return this.envelope(scope, 'chart', await this.answer(scope, plan));
  }

  /**
   * Several charts of one range and granularity in one answer (the console's overview): each as
   * its own route answers it; `segment` splits the charts that split and leaves the others whole.
   */
  async operatorCharts(scope: TenantScope, charts: readonly ChartName[], query: ChartQueryDto): Promise<ReadEnvelope<Partial<Record<ChartName, ChartData>>>> {
    const plans = charts.map((chart) => this.plan(chart, SEGMENTED_CHARTS.has(chart) ? query : { ...query, segment: 'none' }));
    const answers = await Promise.all(plans.map((plan) => this.answer(scope, plan)));
    const data: Partial<Record<ChartName, ChartData>> = {};
    const coverage: Coverage = {};
    for (const [i, answer] of answers.entries()) {
      data[charts[i]] = answer.data;
      Object.assign(coverage, answer.coverage);
    }
    return this.envelope(scope, 'charts', { data, coverage });
  }

  /**
   * Revenue today, this month and last month (gross, refunds, net in cents of the reporting
   * currency): the revenue chart's day of today and its months, so the figures always agree
   * with the chart; refunds and net are null for periods before the lifecycle's first day.
   */
  async operatorRevenueSummary(scope: TenantScope): Promise<ReadEnvelope<RevenueSummaryData>> {
    const today = dayOf(this.clock.nowMs());
    const thisMonth = periodStart(today, 'month');
    const lastMonth = periodStart(addDays(thisMonth, -1), 'month');
    const [days, months] = await Promise.all([
      this.answer(scope, this.plan('revenue', { from: today, to: today, granularity: 'day' })),
      this.answer(scope, this.plan('revenue', { from: lastMonth, to: today, granularity: 'month' })),
    ]);
    const figures = (point: ChartPointView | undefined, period: string): RevenueFigures => ({
      period,
      grossCents: point?.values.grossCents ?? null,
      refundsCents: point?.values.refundsCents ?? null,
      netCents: point?.values.netCents ?? null,
    });
    const byPeriod = new Map(months.data.series.map((p) => [p.period, p]));
    const data: RevenueSummaryData = {
      currency: days.data.currency ?? DEFAULT_REPORTING_CURRENCY,
      today: figures(days.data.series[0], today),
      thisMonth: figures(byPeriod.get(thisMonth), thisMonth),
      lastMonth: figures(byPeriod.get(lastMonth), lastMonth),
    };
    return this.envelope(scope, 'revenue_summary', { data, coverage: months.coverage });
  }

  private envelope<T>(scope: TenantScope, object: string, answer: { data: T; coverage: Coverage }): ReadEnvelope<T> {
    return { object, data: answer.data, meta: { project: scope.projectId, env: scope.env, generatedAt: this.clock.nowMs(), coverage: answer.coverage } };
  }

  /** The request's checks (400 before any read): range, segment and granularity of the chart. */
  private plan(chart: ChartName, query: ChartQueryDto) {
    const today = dayOf(this.clock.nowMs());
    const range = resolveRange({ from: query.from, to: query.to }, today);
    if (isRangeError(range)) throw ApiError.invalidParam(range.message);
    const segment = query.segment ?? 'none';
    if (segment !== 'none' && !SEGMENTED_CHARTS.has(chart))
      throw ApiError.invalidParam(`segment must be none for the ${chart} chart (rail and product split ${[...SEGMENTED_CHARTS].join(', ')})`);
    const granularity: ChartGranularity = chart === 'ltv_cohorts' ? 'month' : (query.granularity ?? 'day');
    return { chart, from: range.from, to: range.to, today, segment, granularity };
  }

  private async answer(scope: TenantScope, plan: ReturnType<ChartsService['plan']>): Promise<{ data: ChartData; coverage: Coverage }> {
    const { chart, granularity, segment } = plan;
    const context = await this.repository.context(scope);
    const request: Request = {
      scope,
      ...plan,
      periods: periodsOf(plan.from, plan.to, granularity),
      context,
      currency: context.currency ?? DEFAULT_REPORTING_CURRENCY,
    };
    const built = await this.build(request);
    const series: ChartPointView[] = request.periods.map((p, i) => {
      const point: ChartPointView = { period: p.period, values: built.total[i] };
      if (built.segments) point.segments = Object.fromEntries([...built.segments].map(([seg, values]) => [seg, values[i]]));
      return point;
    });
    const data: ChartData = { chart, granularity, segment, series, summary: built.summary };
    if (MONEY_CHARTS.has(chart)) data.currency = request.currency;
    return { data: orderKeys(data), coverage: coverageOf(chart, context) };
  }

  private build(r: Request): Promise<Built> {
    switch (r.chart) {
      case 'mrr':
        return this.mrr(r);
      case 'revenue':
      case 'refunds':
        return this.payments(r);
      case 'active_subscriptions':
        return this.activeSubscriptions(r);
      case 'trials':
        return this.trials(r);
      case 'churn':
        return this.churn(r);
      case 'new_customers':
        return this.newCustomers(r);
      case 'ltv_cohorts':
        return this.ltvCohorts(r);
      case 'events':
        return this.events(r);
    }
  }

  private measured(r: Request, since: string | null) {
    return (p: ChartPeriod) => since !== null && p.last >= since && p.first <= r.today;
  }

  /**
   * Periods where the lifecycle's figures (states beyond `active`, trials, refunds) are measured:
   * those of `since` (the ledger's or the subscriptions' first day) from the lifecycle's first day on.
   */
  private lifecycleMeasured(r: Request, since: string | null) {
    const lifecycle = r.context.lifecycleSince;
    return this.measured(r, since === null || lifecycle === null ? null : since > lifecycle ? since : lifecycle);
  }

  /** The total's and each segment's series (rails always all three; products the largest and `other`). */
  private segmented(
    r: Request,
    rows: FactRow[],
    size: (sums: Sums) => number,
    series: (entry: SegmentSums | undefined) => Values[],
    totalFromRows: boolean,
  ): { total: Values[]; segments?: Map<string, Values[]> } {
    const limited = r.segment === 'product' ? limitSegments(rows, size, (row) => totalFromRows && row.seg === '') : rows;
    const table = tabulate(limited);
    const totalEntry = r.segment === 'none' || totalFromRows ? table.get('') : sumSegments(table);
    if (r.segment === 'none') return { total: series(totalEntry) };
    const keys = r.segment === 'rail' ? RAIL_SEGMENTS : [...table.keys()].filter((k) => k !== '').sort();
    return { total: series(totalEntry), segments: new Map(keys.map((k) => [k, series(table.get(k))])) };
  }

  private async mrr(r: Request): Promise<Built> {
    const names = ['mrrCents', 'newCents', 'expansionCents', 'contractionCents', 'churnedCents', 'reactivationCents'];
    const rows = await this.repository.movements(r.scope, r.currency, r.from, r.to, r.granularity, r.segment);
    const measured = this.measured(r, r.context.revenueSince);
    const series = (entry: SegmentSums | undefined) =>
      seriesOf(
        entry && { opening: { mrr: net(entry.opening) }, periods: entry.periods },
        r.periods,
        measured,
        names,
        (balance, s) => ({
          mrrCents: cents(sumOf(balance, 'mrr') + net(s)),
          newCents: cents(sumOf(s, 'newMinor')),
          expansionCents: cents(sumOf(s, 'expansionMinor')),
          contractionCents: cents(sumOf(s, 'contractionMinor')),
          churnedCents: cents(sumOf(s, 'churnedMinor')),
          reactivationCents: cents(sumOf(s, 'reactivationMinor')),
        }),
        (balance, s) => {
          balance.mrr = sumOf(balance, 'mrr') + net(s);
        },
      );
    const built = this.segmented(r, rows, net, series, true);
    const moved = built.total.map((v) =>
      v.mrrCents === null ? null : (v.newCents ?? 0) + (v.expansionCents ?? 0) + (v.reactivationCents ?? 0) - (v.contractionCents ?? 0) - (v.churnedCents ?? 0),
    );
    const known = moved.filter((m): m is number => m !== null);
    return { ...built, summary: { mrrCents: last(built.total, 'mrrCents'), netMovementCents: known.length ? known.reduce((a, b) => a + b, 0) : null } };
  }

  private async payments(r: Request): Promise<Built> {
    const rows = await this.repository.payments(r.scope, r.currency, r.from, r.to, r.granularity, r.segment);
    const refunds = r.chart === 'refunds';
    const measured = refunds ? this.lifecycleMeasured(r, r.context.revenueSince) : this.measured(r, r.context.revenueSince);
    const refundsMeasured = this.lifecycleMeasured(r, r.context.revenueSince);
    // `payments` rides along in the refunds chart for the summary's rate, then goes.
    const names = refunds ? ['refunds', 'refundRate', 'refundsCents', 'payments'] : ['grossCents', 'refundsCents', 'netCents', 'transactions'];
    const compute = (_: Sums, s: Sums): Values =>
      refunds
        ? {
            refunds: sumOf(s, 'refunds'),
            refundRate: ratio(sumOf(s, 'refunds'), sumOf(s, 'payments')),
            refundsCents: cents(sumOf(s, 'refundsMinor')),
            payments: sumOf(s, 'payments'),
          }
        : {
            grossCents: cents(sumOf(s, 'grossMinor')),
            refundsCents: cents(sumOf(s, 'refundsMinor')),
            netCents: cents(sumOf(s, 'grossMinor') - sumOf(s, 'refundsMinor')),
            transactions: sumOf(s, 'payments'),
          };
    const series = (entry: SegmentSums | undefined) => {
      const values = seriesOf(entry, r.periods, measured, names, compute);
      if (!refunds) r.periods.forEach((p, i) => !refundsMeasured(p) && REFUND_VALUES.forEach((n) => (values[i][n] = null)));
      return values;
    };
    const built = this.segmented(r, rows, (s) => sumOf(s, 'grossMinor'), series, false);
    const summary: Values = Object.fromEntries(names.map((n) => [n, total(built.total, n)]));
    if (refunds) {
      summary.refundRate = ratio(summary.refunds, summary.payments);
      const drop = (values: Values) => delete values.payments;
      built.total.forEach(drop);
      for (const values of built.segments?.values() ?? []) values.forEach(drop);
      drop(summary);
    }
    return { ...built, summary };
  }

  private stateSeries(r: Request, names: readonly string[]) {
    const measured = this.measured(r, r.context.subscriptionsSince);
    const lifecycleMeasured = this.lifecycleMeasured(r, r.context.subscriptionsSince);
    return (entry: SegmentSums | undefined) =>
      seriesOf(
        entry,
        r.periods,
        measured,
        names,
        (balance, s) => Object.fromEntries(STATE_SUMS.map(([name]) => [name, sumOf(balance, name) + sumOf(s, name)])),
        (balance, s) => {
          for (const [name] of STATE_SUMS) balance[name] = sumOf(balance, name) + sumOf(s, name);
        },
      ).map((values, i) => {
        // `active` is measured with the subscriptions; the other states from the lifecycle's first day.
        if (!lifecycleMeasured(r.periods[i])) for (const [name, state] of STATE_SUMS) if (state !== 'active') values[name] = null;
        return values;
      });
  }

  private async activeSubscriptions(r: Request): Promise<Built> {
    const names = STATE_SUMS.map(([name]) => name);
    const rows = await this.repository.states(r.scope, r.from, r.to, r.granularity, r.segment, 'lifecycle');
    const built = this.segmented(r, rows, (s) => sumOf(s, 'active'), this.stateSeries(r, names), false);
    return { ...built, summary: Object.fromEntries(names.map((n) => [n, last(built.total, n)])) };
  }

  /** Trials started and converted per period; the rate: of the trials that ended in it, the share that converted. */
  private async trials(r: Request): Promise<Built> {
    const rows = await this.repository.trials(r.scope, r.from, r.to, r.granularity);
    const series = seriesOf(
      tabulate(rows).get(''),
      r.periods,
      this.lifecycleMeasured(r, r.context.subscriptionsSince),
      ['started', 'converted', 'conversionRate', 'ended'],
      (_, s) => ({
        started: sumOf(s, 'started'),
        converted: sumOf(s, 'converted'),
        conversionRate: ratio(sumOf(s, 'converted'), sumOf(s, 'ended')),
        ended: sumOf(s, 'ended'),
      }),
    );
    const summary: Values = {
      started: total(series, 'started'),
      converted: total(series, 'converted'),
      conversionRate: ratio(total(series, 'converted'), total(series, 'ended')),
    };
    for (const values of series) delete values.ended;
    return { total: series, summary };
  }

  private async churn(r: Request): Promise<Built> {
    const names = ['churnedSubscriptions', 'subscriberChurnRate', 'mrrChurnRate'];
    const [states, movements] = await Promise.all([
      this.repository.states(r.scope, r.from, r.to, r.granularity, 'none', 'paying'),
      this.repository.movements(r.scope, r.currency, r.from, r.to, r.granularity, 'none'),
    ]);
    const stateTable = tabulate(states).get('');
    const moveTable = tabulate(movements).get('');
    const measured = this.measured(r, r.context.subscriptionsSince);
    const churned = seriesOf(
      stateTable,
      r.periods,
      measured,
      ['churned', 'activeAtStart'],
      (balance, s) => ({
        churned: sumOf(s, 'activeOut'),
        activeAtStart: sumOf(balance, 'activeIn') - sumOf(balance, 'activeOut'),
      }),
      (balance, s) => {
        balance.activeIn = sumOf(balance, 'activeIn') + sumOf(s, 'activeIn');
        balance.activeOut = sumOf(balance, 'activeOut') + sumOf(s, 'activeOut');
      },
    );
    const mrr = seriesOf(
      moveTable && { opening: { mrr: net(moveTable.opening) }, periods: moveTable.periods },
      r.periods,
      this.measured(r, r.context.revenueSince),
      ['churnedMinor', 'mrrAtStart'],
      (balance, s) => ({ churnedMinor: sumOf(s, 'churnedMinor'), mrrAtStart: sumOf(balance, 'mrr') }),
      (balance, s) => {
        balance.mrr = sumOf(balance, 'mrr') + net(s);
      },
    );
    const series = r.periods.map((_, i) => ({
      churnedSubscriptions: churned[i].churned,
      subscriberChurnRate: churned[i].churned === null ? null : ratio(churned[i].churned, churned[i].activeAtStart),
      mrrChurnRate: mrr[i].churnedMinor === null ? null : ratio(mrr[i].churnedMinor, mrr[i].mrrAtStart),
    }));
    return { total: series, summary: Object.fromEntries(names.map((n) => [n, mean(series, n)])) };
  }

  private async newCustomers(r: Request): Promise<Built> {
    const rows = await this.repository.newCustomers(r.scope, r.from, r.to, r.granularity);
    const series = seriesOf(
      tabulate(rows).get(''),
      r.periods,
      this.measured(r, r.context.customersSince),
      ['newCustomers', 'newPaying', 'conversionToPaying'],
      (_, s) => ({
        newCustomers: sumOf(s, 'newCustomers'),
        newPaying: sumOf(s, 'newPaying'),
        conversionToPaying: ratio(sumOf(s, 'converted'), sumOf(s, 'newCustomers')),
      }),
    );
    const converted = seriesOf(tabulate(rows).get(''), r.periods, this.measured(r, r.context.customersSince), ['converted'], (_, s) => ({
      converted: sumOf(s, 'converted'),
    }));
    return {
      total: series,
      summary: {
        newCustomers: total(series, 'newCustomers'),
        newPaying: total(series, 'newPaying'),
        conversionToPaying: ratio(total(converted, 'converted'), total(series, 'newCustomers')),
      },
    };
  }

  private async events(r: Request): Promise<Built> {
    const daily = r.granularity === 'day';
    const measured = this.measured(r, r.context.eventsSince);
    // A range inside one week or month that clips both its ends: its distinct customers counted from the day rows.
    const inside = r.periods.length === 1 && r.periods[0].first !== r.periods[0].period && r.periods[0].last !== periodEnd(r.periods[0].period, r.granularity);
    const [rows, active, insideUsers] = await Promise.all([
      this.repository.events(r.scope, r.from, r.to, r.granularity),
      r.to === r.today && r.context.eventsSince !== null ? this.repository.activeSince(r.scope, r.from) : Promise.resolve(null),
      !daily && inside && measured(r.periods[0]) ? this.repository.activeBetween(r.scope, r.from, r.to) : Promise.resolve(0),
    ]);
    const series = seriesOf(tabulate(rows).get(''), r.periods, measured, ['events', 'errors', 'uniqueUsers'], (_, s, p) => ({
      events: sumOf(s, 'events'),
      errors: sumOf(s, 'errors'),
      // Distinct customers over a week or a month are not the sum of its days: counted per period.
      uniqueUsers: daily ? sumOf(s, 'uniqueUsers') : inside ? insideUsers : p.first === p.period ? sumOf(s, 'firsts') : sumOf(s, 'lasts'),
    }));
    return { total: series, summary: { events: total(series, 'events'), errors: total(series, 'errors'), uniqueUsers: active } };
  }

  private async ltvCohorts(r: Request): Promise<Built> {
    const thisMonth = periodStart(r.today, 'month');
    const cohorts = await this.repository.cohorts(r.scope, r.currency, periodStart(r.from, 'month'), r.to);
    const byMonth = new Map(cohorts.map((c) => [c.cohortMonth, c]));
    const measured = this.measured(r, r.context.revenueSince);
    const names = Array.from({ length: COHORT_MONTHS }, (_, k) => `m${k}`);
    const series = r.periods.map((p) => {
      if (!measured(p)) return nulls(names);
      const cohort = byMonth.get(p.period);
      let cumulative = 0;
      const values: Values = {};
      for (let k = 0; k < COHORT_MONTHS; k += 1) {
        const month = addMonths(p.period, k);
        cumulative += cohort?.cash.get(month) ?? 0;
        values[`m${k}`] = month > thisMonth || !cohort ? null : cents(cumulative / cohort.customers);
      }
      return values;
    });
    return { total: series, summary: {} };
  }
}

/** The first day of the month `months` after the month starting `month`. */
function addMonths(month: string, months: number): string {
  const [y, m] = month.split('-').map(Number);
  const n = y * 12 + (m - 1) + months;
  return `${String(Math.floor(n / 12)).padStart(4, '0')}-${String((n % 12) + 1).padStart(2, '0')}-01`;
}

function coverageOf(chart: ChartName, context: ChartContext): Coverage {
  const since = (day: string | null) =>
    day === null ? { state: 'not_instrumented' as const, since: null } : { state: 'measured' as const, since: Date.parse(`${day}T00:00:00Z`) };
  const surface: [CoverageSurface, string | null] =
    chart === 'events'
      ? ['analytics', context.eventsSince]
      : chart === 'new_customers'
        ? ['userCensus', context.customersSince]
        : ['revenue', context.revenueSince];
  return { [surface[0]]: since(surface[1]) };
}

/** `currency` after `chart`, as the public API lists the fields. */
function orderKeys(data: ChartData): ChartData {
  const { chart, currency, granularity, segment, series, summary } = data;
  return currency === undefined ? { chart, granularity, segment, series, summary } : { chart, currency, granularity, segment, series, summary };
}

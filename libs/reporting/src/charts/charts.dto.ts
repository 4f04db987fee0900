import { type Type as ClassType } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString } from 'class-validator';
import { ReadMetaView } from '../read-envelope.js';
import { CHART_GRANULARITIES, type ChartGranularity, MAX_RANGE_DAYS } from './chart-periods.js';
import type { ChartSegment } from './charts.repository.js';
import { CHARTS } from './charts.service.js';

const SEGMENTS = ['rail', 'product', 'none'] as const;

export class ChartQueryDto {
  @ApiPropertyOptional({
    example: '2026-11-01',
    description: `First day (UTC, included); default: 29 days before \`to\`. At most ${MAX_RANGE_DAYS} days with \`to\`.`,
  })
  @IsOptional()
  @IsString({ message: 'from must be a date YYYY-MM-DD' })
  from?: string;

  @ApiPropertyOptional({ example: '2026-11-30', description: 'Last day (UTC, included); default: today on the service clock' })
  @IsOptional()
  @IsString({ message: 'to must be a date YYYY-MM-DD' })
  to?: string;

  @ApiPropertyOptional({ enum: CHART_GRANULARITIES, default: 'day', description: 'Weeks start on Monday (UTC); ltv_cohorts is always month' })
  @IsOptional()
  @IsIn(CHART_GRANULARITIES, { message: 'granularity must be day, week or month' })
  granularity?: ChartGranularity;

  @ApiPropertyOptional({ enum: SEGMENTS, default: 'none', description: 'rail or product split mrr, revenue, refunds and active_subscriptions' })
  @IsOptional()
  @IsIn(SEGMENTS, { message: 'segment must be rail, product or none' })
  segment?: ChartSegment;
}

/** A chart's answer: one point per period, oldest first, and a summary; null is "not measured", never 0. */
export interface ChartPointView {
  period: string;
  values: Record<string, number | null>;
  segments?: Record<string, Record<string, number | null>>;
}
export interface ChartData {
  chart: string;
  currency?: string;
  granularity: ChartGranularity;
  segment: ChartSegment;
  series: ChartPointView[];
  summary: Record<string, number | null>;
}

const n = (description?: string) => ApiProperty({ type: Number, nullable: true, description });

export class MrrValuesView {
  @n('MRR at the period’s end, cents') mrrCents: number | null;
  @n() newCents: number | null;
  @n() expansionCents: number | null;
  @n() contractionCents: number | null;
  @n() churnedCents: number | null;
  @n() reactivationCents: number | null;
}
export class MrrSummaryView {
  @n('MRR at the last measured period’s end') mrrCents: number | null;
  @n('new + expansion + reactivation − contraction − churned over the range') netMovementCents: number | null;
}
export class RevenueValuesView {
  @n() grossCents: number | null;
  @n('Refunds and chargebacks less reversals, each on its own day; null before the lifecycle’s first day') refundsCents: number | null;
  @n('grossCents − refundsCents; null before the lifecycle’s first day') netCents: number | null;
  @n('Payments') transactions: number | null;
}
export class ActiveSubscriptionsValuesView {
  @n('Paying subscriptions in the active state at the period’s end (a record without a lifecycle state: while paying)') active: number | null;
  @n('In a free trial; null before the lifecycle’s first day') trialing: number | null;
  @n('In a grace period while paying; null before the lifecycle’s first day') inGracePeriod: number | null;
  @n('In billing retry; null before the lifecycle’s first day') inBillingRetry: number | null;
  @n('Paused; null before the lifecycle’s first day') paused: number | null;
}
export class TrialsValuesView {
  @n('Trials started in the period') started: number | null;
  @n('Trials that ended in the period by becoming active') converted: number | null;
  @n('converted / trials that ended in the period (0–1); null when none ended') conversionRate: number | null;
}
export class ChurnValuesView {
  @n('Subscriptions that stopped counting as paying') churnedSubscriptions: number | null;
  @n('churned / paying at the period’s start (0–1)') subscriberChurnRate: number | null;
  @n('churned MRR / MRR at the period’s start (0–1)') mrrChurnRate: number | null;
}
export class RefundsValuesView {
  @n('Refunds and chargebacks less reversals (a period holding the reversal of an earlier chargeback can be negative)') refunds: number | null;
  @n('refunds / payments of the period') refundRate: number | null;
  @n('Refunds and chargebacks less reversals, cents') refundsCents: number | null;
}
export class NewCustomersValuesView {
  @n() newCustomers: number | null;
  @n('Customers whose first payment falls in the period') newPaying: number | null;
  @n('Of the customers created in the period, the share that first paid in it (0–1)') conversionToPaying: number | null;
}
export class EventsValuesView {
  @n() events: number | null;
  @n() errors: number | null;
  @n('Distinct customers with an event: per day; null for weeks and months; in the summary, over a range that ends today') uniqueUsers: number | null;
}
export class LtvCohortValuesView {
  @n('Cumulative net cash per paying customer of the cohort by the end of its first month') m0: number | null;
  @n() m1: number | null;
  @n() m2: number | null;
  @n() m3: number | null;
  @n() m4: number | null;
  @n() m5: number | null;
  @n() m6: number | null;
  @n() m7: number | null;
  @n() m8: number | null;
  @n() m9: number | null;
  @n() m10: number | null;
  @n() m11: number | null;
}
export class EmptySummaryView {}

/** The point, data and envelope classes of one chart (named for the OpenAPI document). */
function chartViews(name: string, values: ClassType, summary: ClassType, money: boolean, segmented: boolean): { envelope: ClassType; data: ClassType } {
  class Point {
    @ApiProperty({ example: '2026-11-30', description: 'The period’s first day (a Monday for weeks, the 1st for months)' }) period: string;
    @ApiProperty({ type: values }) values: unknown;
  }
  if (segmented)
    ApiPropertyOptional({
      type: 'object',
      additionalProperties: { $ref: `#/components/schemas/${values.name}` },
      description: 'segment=rail|product: the same values per rail or product (the 20 largest, the rest as other)',
    })(Point.prototype, 'segments');
  class Data {
    @ApiProperty({ example: name }) chart: string;
    @ApiProperty({ enum: CHART_GRANULARITIES }) granularity: string;
    @ApiProperty({ enum: SEGMENTS }) segment: string;
    @ApiProperty({ type: [Point] }) series: unknown[];
    @ApiProperty({ type: summary }) summary: unknown;
  }
  if (money) ApiProperty({ type: String, example: 'USD', description: 'The reporting currency of every amount' })(Data.prototype, 'currency');
  class Envelope {
    @ApiProperty({ example: 'chart' }) object: string;
    @ApiProperty({ type: Data }) data: unknown;
    @ApiProperty({ type: ReadMetaView }) meta: ReadMetaView;
  }
  const pascal = name.replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase());
  Object.defineProperty(Point, 'name', { value: `${pascal}ChartPoint` });
  Object.defineProperty(Data, 'name', { value: `${pascal}ChartData` });
  Object.defineProperty(Envelope, 'name', { value: `${pascal}ChartEnvelope` });
  return { envelope: Envelope, data: Data };
}

const mrr = chartViews('mrr', MrrValuesView, MrrSummaryView, true, true);
const revenue = chartViews('revenue', RevenueValuesView, RevenueValuesView, true, true);
const activeSubscriptions = chartViews('active_subscriptions', ActiveSubscriptionsValuesView, ActiveSubscriptionsValuesView, false, true);
const trials = chartViews('trials', TrialsValuesView, TrialsValuesView, false, false);
const churn = chartViews('churn', ChurnValuesView, ChurnValuesView, false, false);
const refunds = chartViews('refunds', RefundsValuesView, RefundsValuesView, true, true);
const newCustomers = chartViews('new_customers', NewCustomersValuesView, NewCustomersValuesView, false, false);
const ltvCohorts = chartViews('ltv_cohorts', LtvCohortValuesView, EmptySummaryView, true, false);
const events = chartViews('events', EventsValuesView, EventsValuesView, false, false);

export const MrrChartEnvelope = mrr.envelope;
export const RevenueChartEnvelope = revenue.envelope;
export const ActiveSubscriptionsChartEnvelope = activeSubscriptions.envelope;
export const TrialsChartEnvelope = trials.envelope;
export const ChurnChartEnvelope = churn.envelope;
export const RefundsChartEnvelope = refunds.envelope;
export const NewCustomersChartEnvelope = newCustomers.envelope;
export const LtvCohortsChartEnvelope = ltvCohorts.envelope;
export const EventsChartEnvelope = events.envelope;

/** The operator API's chart reads: the public query and the environment the operator chose. */
export class OperatorChartQueryDto extends ChartQueryDto {
  @ApiPropertyOptional({ enum: ['production', 'sandbox'], default: 'production' })
  @IsOptional()
  @IsIn(['production', 'sandbox'], { message: 'env must be production or sandbox' })
  env?: 'production' | 'sandbox';
}

export class OperatorChartsQueryDto extends OperatorChartQueryDto {
  @ApiPropertyOptional({
    example: 'mrr,revenue,active_subscriptions',
    description: `Comma-separated charts to answer (default all: ${CHARTS.join(', ')}); segment splits the ones that split and leaves the others whole`,
  })
  @IsOptional()
  @IsString({ message: 'charts must be a comma-separated list of charts' })
  charts?: string;
}

export class ChartsBatchData {
  @ApiPropertyOptional({ type: mrr.data }) mrr?: unknown;
  @ApiPropertyOptional({ type: revenue.data }) revenue?: unknown;
  @ApiPropertyOptional({ type: activeSubscriptions.data }) active_subscriptions?: unknown;
  @ApiPropertyOptional({ type: trials.data }) trials?: unknown;
  @ApiPropertyOptional({ type: churn.data }) churn?: unknown;
  @ApiPropertyOptional({ type: refunds.data }) refunds?: unknown;
  @ApiPropertyOptional({ type: newCustomers.data }) new_customers?: unknown;
  @ApiPropertyOptional({ type: ltvCohorts.data }) ltv_cohorts?: unknown;
  @ApiPropertyOptional({ type: events.data }) events?: unknown;
}
export class ChartsBatchEnvelope {
  @ApiProperty({ example: 'charts' }) object: string;
  @ApiProperty({ type: ChartsBatchData, description: 'Each chart asked for, as its own route answers it' }) data: ChartsBatchData;
  @ApiProperty({ type: ReadMetaView }) meta: ReadMetaView;
}

/** Gross, refunds and net of one period; null: not measured. */
export interface RevenueFigures {
  period: string;
  grossCents: number | null;
  refundsCents: number | null;
  netCents: number | null;
}
export interface RevenueSummaryData {
  currency: string;
  today: RevenueFigures;
  thisMonth: RevenueFigures;
  lastMonth: RevenueFigures;
}
export class RevenuePeriodFiguresView {
  @ApiProperty({ example: '2026-12-01', description: 'The period’s first day' }) period: string;
  @n('Payments, cents; null: not measured') grossCents: number | null;
  @n('null while refunds are not measured') refundsCents: number | null;
  @n('gross − refunds; null while refunds are not measured') netCents: number | null;
}
export class RevenueSummaryDataView {
  @ApiProperty({ example: 'USD', description: 'The reporting currency of every amount' }) currency: string;
  @ApiProperty({ type: RevenuePeriodFiguresView, description: 'Today (UTC) so far' }) today: RevenuePeriodFiguresView;
  @ApiProperty({ type: RevenuePeriodFiguresView, description: 'This calendar month (UTC) so far' }) thisMonth: RevenuePeriodFiguresView;
  @ApiProperty({ type: RevenuePeriodFiguresView, description: 'The previous calendar month' }) lastMonth: RevenuePeriodFiguresView;
}
export class RevenueSummaryEnvelope {
  @ApiProperty({ example: 'revenue_summary' }) object: string;
  @ApiProperty({ type: RevenueSummaryDataView }) data: RevenueSummaryDataView;
  @ApiProperty({ type: ReadMetaView }) meta: ReadMetaView;
}

import { type Type as ClassType } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString } from 'class-validator';
import { ReadMetaView } from '../read-envelope.js';
import { CHART_GRANULARITIES, type ChartGranularity, MAX_RANGE_DAYS } from './chart-periods.js';
import type { ChartSegment } from './charts.repository.js';

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
  @n('null until refunds are recorded') refundsCents: number | null;
  @n('null until refunds are recorded') netCents: number | null;
  @n('Payments') transactions: number | null;
}
export class ActiveSubscriptionsValuesView {
  @n() active: number | null;
  @n('null: not recorded yet') trialing: number | null;
  @n('null: not recorded yet') inGracePeriod: number | null;
  @n('null: not recorded yet') inBillingRetry: number | null;
  @n('null: not recorded yet') paused: number | null;
}
export class TrialsValuesView {
  @n('null: not recorded yet') started: number | null;
  @n('null: not recorded yet') converted: number | null;
  @n('null: not recorded yet') conversionRate: number | null;
}
export class ChurnValuesView {
  @n('Subscriptions that stopped counting as active') churnedSubscriptions: number | null;
  @n('churned / active at the period’s start (0–1)') subscriberChurnRate: number | null;
  @n('churned MRR / MRR at the period’s start (0–1)') mrrChurnRate: number | null;
}
export class RefundsValuesView {
  @n('null until refunds are recorded') refunds: number | null;
  @n('null until refunds are recorded') refundRate: number | null;
  @n('null until refunds are recorded') refundsCents: number | null;
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
function chartViews(name: string, values: ClassType, summary: ClassType, money: boolean, segmented: boolean): ClassType {
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
  return Envelope;
}

export const MrrChartEnvelope = chartViews('mrr', MrrValuesView, MrrSummaryView, true, true);
export const RevenueChartEnvelope = chartViews('revenue', RevenueValuesView, RevenueValuesView, true, true);
export const ActiveSubscriptionsChartEnvelope = chartViews('active_subscriptions', ActiveSubscriptionsValuesView, ActiveSubscriptionsValuesView, false, true);
export const TrialsChartEnvelope = chartViews('trials', TrialsValuesView, TrialsValuesView, false, false);
export const ChurnChartEnvelope = chartViews('churn', ChurnValuesView, ChurnValuesView, false, false);
export const RefundsChartEnvelope = chartViews('refunds', RefundsValuesView, RefundsValuesView, true, true);
export const NewCustomersChartEnvelope = chartViews('new_customers', NewCustomersValuesView, NewCustomersValuesView, false, false);
export const LtvCohortsChartEnvelope = chartViews('ltv_cohorts', LtvCohortValuesView, EmptySummaryView, true, false);
export const EventsChartEnvelope = chartViews('events', EventsValuesView, EventsValuesView, false, false);

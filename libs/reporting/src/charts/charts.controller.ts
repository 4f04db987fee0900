import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiExcludeEndpoint, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiError, ApiErrors } from '#platform';
import { type AuthContext, CurrentKey } from '#keys';
import type { ReadEnvelope } from '../read-envelope.js';
import { ReportingRead, SCOPED_READ_ERRORS } from '../reporting-read.decorator.js';
import {
  ActiveSubscriptionsChartEnvelope,
  ChartQueryDto,
  ChurnChartEnvelope,
  EventsChartEnvelope,
  LtvCohortsChartEnvelope,
  MrrChartEnvelope,
  NewCustomersChartEnvelope,
  RefundsChartEnvelope,
  RevenueChartEnvelope,
  TrialsChartEnvelope,
  type ChartData,
} from './charts.dto.js';
import { CHARTS, ChartsService } from './charts.service.js';

const REVENUE = { scopes: ['revenue:read'] } as const;
const AGGREGATE = { scopes: ['reporting:aggregate'] } as const;
const DESCRIPTION =
  'from/to (YYYY-MM-DD, UTC, both included; default the 30 days ending today; at most 731 days), granularity day|week|month (weeks start on Monday). One point per period, oldest first, named by its first day; a period not measured yet (before the first fact, in the future) is null, never 0. Read from per-day facts kept with the ledger and the rollups.';

/**
 * `GET /v1/charts/{chart}`: one route per chart, each with its scope and answer shape; an
 * unknown chart is 404 resource_missing, as any unknown path.
 */
@ApiTags('reporting')
@Controller('v1/charts')
export class ChartsController {
  constructor(private readonly charts: ChartsService) {}

  @Get('mrr')
  @ReportingRead(REVENUE)
  @ApiOperation({ operationId: 'getMrrChart', summary: 'MRR at each period’s end and its movements (scope: revenue:read)', description: DESCRIPTION })
  @ApiOkResponse({ type: MrrChartEnvelope })
  @ApiErrors(SCOPED_READ_ERRORS)
  mrr(@CurrentKey() auth: AuthContext, @Query() query: ChartQueryDto): Promise<ReadEnvelope<ChartData>> {
    return this.charts.chart(auth, 'mrr', query);
  }

  @Get('revenue')
  @ReportingRead(REVENUE)
  @ApiOperation({ operationId: 'getRevenueChart', summary: 'Gross cash, refunds and payments per period (scope: revenue:read)', description: DESCRIPTION })
  @ApiOkResponse({ type: RevenueChartEnvelope })
  @ApiErrors(SCOPED_READ_ERRORS)
  revenue(@CurrentKey() auth: AuthContext, @Query() query: ChartQueryDto): Promise<ReadEnvelope<ChartData>> {
    return this.charts.chart(auth, 'revenue', query);
  }

  @Get('refunds')
  @ReportingRead(REVENUE)
  @ApiOperation({ operationId: 'getRefundsChart', summary: 'Refunds and refund rate per period (scope: revenue:read)', description: DESCRIPTION })
  @ApiOkResponse({ type: RefundsChartEnvelope })
  @ApiErrors(SCOPED_READ_ERRORS)
  refunds(@CurrentKey() auth: AuthContext, @Query() query: ChartQueryDto): Promise<ReadEnvelope<ChartData>> {
    return this.charts.chart(auth, 'refunds', query);
  }

  @Get('ltv_cohorts')
  @ReportingRead(REVENUE)
  @ApiOperation({
    operationId: 'getLtvCohortsChart',
    summary: 'Cumulative net cash per paying customer by first-payment month (scope: revenue:read)',
    description: DESCRIPTION,
  })
  @ApiOkResponse({ type: LtvCohortsChartEnvelope })
  @ApiErrors(SCOPED_READ_ERRORS)
  ltvCohorts(@CurrentKey() auth: AuthContext, @Query() query: ChartQueryDto): Promise<ReadEnvelope<ChartData>> {
    return this.charts.chart(auth, 'ltv_cohorts', query);
  }

  @Get('active_subscriptions')
  @ReportingRead(AGGREGATE)
  @ApiOperation({
    operationId: 'getActiveSubscriptionsChart',
    summary: 'Subscriptions per state at each period’s end (scope: reporting:aggregate)',
    description: DESCRIPTION,
  })
  @ApiOkResponse({ type: ActiveSubscriptionsChartEnvelope })
  @ApiErrors(SCOPED_READ_ERRORS)
  activeSubscriptions(@CurrentKey() auth: AuthContext, @Query() query: ChartQueryDto): Promise<ReadEnvelope<ChartData>> {
    return this.charts.chart(auth, 'active_subscriptions', query);
  }

  @Get('trials')
  @ReportingRead(AGGREGATE)
  @ApiOperation({ operationId: 'getTrialsChart', summary: 'Trials started and converted per period (scope: reporting:aggregate)', description: DESCRIPTION })
  @ApiOkResponse({ type: TrialsChartEnvelope })
  @ApiErrors(SCOPED_READ_ERRORS)
  trials(@CurrentKey() auth: AuthContext, @Query() query: ChartQueryDto): Promise<ReadEnvelope<ChartData>> {
    return this.charts.chart(auth, 'trials', query);
  }

  @Get('churn')
  @ReportingRead(AGGREGATE)
  @ApiOperation({
    operationId: 'getChurnChart',
    summary: 'Churned subscriptions and churn rates per period (scope: reporting:aggregate)',
    description: DESCRIPTION,
  })
  @ApiOkResponse({ type: ChurnChartEnvelope })
  @ApiErrors(SCOPED_READ_ERRORS)
  churn(@CurrentKey() auth: AuthContext, @Query() query: ChartQueryDto): Promise<ReadEnvelope<ChartData>> {
    return this.charts.chart(auth, 'churn', query);
  }

  @Get('new_customers')
  @ReportingRead(AGGREGATE)
  @ApiOperation({
    operationId: 'getNewCustomersChart',
    summary: 'New customers, first payments and conversion per period (scope: reporting:aggregate)',
    description: DESCRIPTION,
  })
  @ApiOkResponse({ type: NewCustomersChartEnvelope })
  @ApiErrors(SCOPED_READ_ERRORS)
  newCustomers(@CurrentKey() auth: AuthContext, @Query() query: ChartQueryDto): Promise<ReadEnvelope<ChartData>> {
    return this.charts.chart(auth, 'new_customers', query);
  }

  @Get('events')
  @ReportingRead(AGGREGATE)
  @ApiOperation({
    operationId: 'getEventsChart',
    summary: 'Events, errors and distinct active customers per period (scope: reporting:aggregate)',
    description: DESCRIPTION,
  })
  @ApiOkResponse({ type: EventsChartEnvelope })
  @ApiErrors(SCOPED_READ_ERRORS)
  events(@CurrentKey() auth: AuthContext, @Query() query: ChartQueryDto): Promise<ReadEnvelope<ChartData>> {
    return this.charts.chart(auth, 'events', query);
  }

  // Any other chart name answers 404 naming the charts there are; the document lists those charts' own routes.
  @Get(':chart')
  @ReportingRead()
  @ApiExcludeEndpoint()
  unknown(@Param('chart') chart: string): never {
    throw ApiError.resourceMissing(`No such chart: ${chart.slice(0, 64)} (one of ${CHARTS.join(', ')})`);
  }
}

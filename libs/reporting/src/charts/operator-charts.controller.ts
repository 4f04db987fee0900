import { Controller, Get, Param, Query, type Type } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { ApiError, ApiErrors, Operator, TenantScopes } from '#platform';
import { ProjectDirectory } from '#keys';
import { OverviewQueryDto } from '../overview/overview.dto.js';
import type { ReadEnvelope } from '../read-envelope.js';
import {
  ActiveSubscriptionsChartEnvelope,
  ChartsBatchEnvelope,
  ChurnChartEnvelope,
  EventsChartEnvelope,
  LtvCohortsChartEnvelope,
  MrrChartEnvelope,
  NewCustomersChartEnvelope,
  OperatorChartQueryDto,
  OperatorChartsQueryDto,
  RefundsChartEnvelope,
  RevenueChartEnvelope,
  RevenueSummaryEnvelope,
  TrialsChartEnvelope,
  type ChartData,
  type RevenueSummaryData,
} from './charts.dto.js';
import { CHARTS, type ChartName, ChartsService } from './charts.service.js';

const DESCRIPTION =
  'The operator’s read of the project and environment (env, default production): exactly what `GET /v1/charts/{chart}` answers for them. from/to (YYYY-MM-DD, UTC, both included; default the 30 days ending today; at most 731 days), granularity day|week|month (weeks start on Monday); a period not measured yet is null, never 0.';
const ERRORS = { 400: ['invalid_param_value'], 404: ['resource_missing'] } as const;
const ENVELOPES: Record<ChartName, Type> = {
  mrr: MrrChartEnvelope,
  revenue: RevenueChartEnvelope,
  active_subscriptions: ActiveSubscriptionsChartEnvelope,
  trials: TrialsChartEnvelope,
  churn: ChurnChartEnvelope,
  refunds: RefundsChartEnvelope,
  new_customers: NewCustomersChartEnvelope,
  ltv_cohorts: LtvCohortsChartEnvelope,
  events: EventsChartEnvelope,
};

const isChart = (name: string): name is ChartName => (CHARTS as readonly string[]).includes(name);

/**
 * The console's charts: the read API's charts of any project and environment under the
 * operator's credentials, one at a time or several of one range at once (a page's single call),
 * and the revenue of today, this month and last month.
 */
@ApiTags('operator')
@Operator()
// Every chart's envelope in the document the one-chart answer names (oneOf).
@ApiExtraModels(...Object.values(ENVELOPES))
@Controller('admin/v1/projects/:projectId')
export class OperatorChartsController {
  constructor(
    private readonly charts: ChartsService,
    private readonly projects: ProjectDirectory,
  ) {}

  @Get('charts')
  @ApiOperation({
    operationId: 'adminGetProjectCharts',
    summary: 'Several charts of one range, granularity and segment in one answer (charts=mrr,revenue,…)',
    description: DESCRIPTION,
  })
  @ApiOkResponse({ type: ChartsBatchEnvelope })
  @ApiErrors(ERRORS)
  async many(@Param('projectId') projectId: string, @Query() query: OperatorChartsQueryDto): Promise<ReadEnvelope<Partial<Record<ChartName, ChartData>>>> {
    const names = query.charts === undefined ? [...CHARTS] : [...new Set(query.charts.split(',').map((name) => name.trim()))];
    const unknown = names.find((name) => !isChart(name));
    if (unknown !== undefined || names.length === 0)
      throw ApiError.invalidParam(`charts must name charts among ${CHARTS.join(', ')}${unknown ? ` (not ${unknown.slice(0, 64)})` : ''}`);
    await this.projects.assertExists(projectId);
    return this.charts.operatorCharts(TenantScopes.operator(projectId, query.env ?? 'production'), names as ChartName[], query);
  }

  @Get('charts/:chart')
  @ApiOperation({
    operationId: 'adminGetProjectChart',
    summary: 'One chart of the project and environment, as `GET /v1/charts/{chart}` answers it',
    description: DESCRIPTION,
  })
  @ApiOkResponse({
    schema: { oneOf: Object.values(ENVELOPES).map((type) => ({ $ref: getSchemaPath(type) })) },
    description: 'The chart’s envelope (one of the chart shapes, by name)',
  })
  @ApiErrors(ERRORS)
  async one(@Param('projectId') projectId: string, @Param('chart') chart: string, @Query() query: OperatorChartQueryDto): Promise<ReadEnvelope<ChartData>> {
    if (!isChart(chart)) throw ApiError.resourceMissing(`No such chart: ${chart.slice(0, 64)} (one of ${CHARTS.join(', ')})`);
    await this.projects.assertExists(projectId);
    return this.charts.operatorChart(TenantScopes.operator(projectId, query.env ?? 'production'), chart, query);
  }

  @Get('revenue-summary')
  @ApiOperation({
    operationId: 'adminGetProjectRevenueSummary',
    summary: 'Revenue today, this month and last month (gross, refunds, net) in the reporting currency',
    description: 'The revenue chart’s figures for today and the two calendar months (UTC); refunds and net are null while refunds are not measured.',
  })
  @ApiOkResponse({ type: RevenueSummaryEnvelope })
  @ApiErrors(ERRORS)
  async revenueSummary(@Param('projectId') projectId: string, @Query() query: OverviewQueryDto): Promise<ReadEnvelope<RevenueSummaryData>> {
    await this.projects.assertExists(projectId);
    return this.charts.operatorRevenueSummary(TenantScopes.operator(projectId, query.env ?? 'production'));
  }
}

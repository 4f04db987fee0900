import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '#platform';
import { type AuthContext, CurrentKey } from '#keys';
import type { ReadEnvelope } from '../read-envelope.js';
import { ReportingRead, SCOPED_READ_ERRORS } from '../reporting-read.decorator.js';
import { BreakdownEnvelope, BreakdownQueryDto, MetricsEnvelope, MetricsQueryDto, type BreakdownData, type MetricsData } from './analytics.dto.js';
import { AnalyticsReadsService } from './analytics-reads.service.js';

const READ_ERRORS = { ...SCOPED_READ_ERRORS, 403: [...SCOPED_READ_ERRORS[403], 'origin_not_allowed'] } as const;

@ApiTags('reporting')
@Controller()
export class AnalyticsController {
  constructor(private readonly analytics: AnalyticsReadsService) {}

  @Get('v1/reporting/metrics')
  @ReportingRead({ scopes: ['reporting:aggregate'] })
  @ApiOperation({
    operationId: 'getWebMetrics',
    summary: 'Page views and unique visitors of one host (scope reporting:aggregate)',
    description:
      "From the per-day page.viewed rollups. host must be a host of the project's allowed origins (403 origin_not_allowed). granularity=day adds every day of the window.",
  })
  @ApiOkResponse({ type: MetricsEnvelope })
  @ApiErrors(READ_ERRORS)
  metrics(@CurrentKey() auth: AuthContext, @Query() query: MetricsQueryDto): Promise<ReadEnvelope<MetricsData>> {
    return this.analytics.metrics(auth, query.host, query.granularity, query.days);
  }

  @Get('v1/reporting/breakdown')
  @ReportingRead({ scopes: ['reporting:aggregate'] })
  @ApiOperation({
    operationId: 'getWebBreakdown',
    summary: 'Top pages (paths) or top referrers (hosts) of one host by views (scope reporting:aggregate)',
  })
  @ApiOkResponse({ type: BreakdownEnvelope })
  @ApiErrors(READ_ERRORS)
  breakdown(@CurrentKey() auth: AuthContext, @Query() query: BreakdownQueryDto): Promise<ReadEnvelope<BreakdownData>> {
    return this.analytics.breakdown(auth, query.host, query.dimension, query.days, query.limit);
  }
}

import { Body, Controller, Get, Param, Put, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, Operator } from '#platform';
import { type AuthContext, CurrentKey } from '#keys';
import type { ReadEnvelope } from '../read-envelope.js';
import { ReportingRead, SCOPED_READ_ERRORS } from '../reporting-read.decorator.js';
import { ReportingSettingsService } from './reporting-settings.service.js';
import { RevenueReadsService } from './revenue-reads.service.js';
import {
  PutReportingSettingsDto,
  ReportingSettingsView,
  RevenueAveragesEnvelope,
  RevenueEnvelope,
  RevenueQueryDto,
  type RevenueAveragesData,
  type RevenueData,
} from './revenue.dto.js';

@ApiTags('reporting')
@Controller()
export class RevenueController {
  constructor(private readonly revenueReads: RevenueReadsService) {}

  @Get('v1/revenue')
  @ReportingRead({ scopes: ['revenue:read'] })
  @ApiOperation({
    operationId: 'getRevenue',
    summary: 'MRR, paying customers and recognised cash from the revenue ledger (scope: revenue:read)',
    description:
      'Point reads of the ledger the rails keep. mrrCents counts the reporting currency; other currencies are listed, never converted. granularity=day adds a daily series of days points (1–366, default 30). Figures are null while no rail is connected (coverage.revenue not_instrumented).',
  })
  @ApiOkResponse({ type: RevenueEnvelope })
  @ApiErrors(SCOPED_READ_ERRORS)
  revenue(@CurrentKey() auth: AuthContext, @Query() query: RevenueQueryDto): Promise<ReadEnvelope<RevenueData>> {
    return this.revenueReads.revenue(auth, query);
  }

  @Get('v1/revenue/averages')
  @ReportingRead({ scopes: ['revenue:read'] })
  @ApiOperation({
    operationId: 'getRevenueAverages',
    summary: 'ARPU and lifetime value across the paying base (scope: revenue:read)',
    description: 'Lifetime value = annualised MRR plus one-off cash to date; recognisedCashToDateCents is the cash actually recognised.',
  })
  @ApiOkResponse({ type: RevenueAveragesEnvelope })
  @ApiErrors(SCOPED_READ_ERRORS)
  averages(@CurrentKey() auth: AuthContext): Promise<ReadEnvelope<RevenueAveragesData>> {
    return this.revenueReads.averages(auth);
  }
}

@ApiTags('operator')
@Operator()
@Controller('admin/v1/projects/:projectId/reporting')
export class ReportingSettingsController {
  constructor(private readonly settings: ReportingSettingsService) {}

  @Put()
  @ApiOperation({ operationId: 'adminPutReportingSettings', summary: 'Set the project’s reporting currency (ISO 4217; default USD)' })
  @ApiOkResponse({ type: ReportingSettingsView })
  @ApiErrors({ 400: ['invalid_param_value', 'missing_required_param'], 404: ['resource_missing'] })
  put(@Param('projectId') projectId: string, @Body() body: PutReportingSettingsDto): Promise<ReportingSettingsView> {
    return this.settings.put(projectId, body.currency);
  }
}

import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, Operator } from '#platform';
import { OverviewQueryDto, OverviewView } from './overview.dto.js';
import { OverviewService } from './overview.service.js';

@ApiTags('operator')
@Operator()
@Controller('admin/v1/projects/:projectId/overview')
export class OverviewController {
  constructor(private readonly overviews: OverviewService) {}

  @Get()
  @ApiOperation({
    operationId: 'adminGetProjectOverview',
    summary: 'The console’s overview of a project and environment: MRR, paying customers, subscriptions, errors, dead jobs, 30-day MRR',
  })
  @ApiOkResponse({ type: OverviewView })
  @ApiErrors({ 400: ['invalid_param_value'], 404: ['resource_missing'] })
  overview(@Param('projectId') projectId: string, @Query() query: OverviewQueryDto): Promise<OverviewView> {
    return this.overviews.overview(projectId, query.env ?? 'production');
  }
}

import { Body, Controller, Get, Param, Put } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, Operator } from '#platform';
import { PutIosStoreRailDto, RailList, RailView } from './rails-operator.dto.js';
import { RailsOperatorService } from './rails-operator.service.js';

@ApiTags('operator')
@Operator()
@Controller('admin/v1/projects/:projectId/rails')
export class RailsOperatorController {
  constructor(private readonly rails: RailsOperatorService) {}

  @Put('ios_store')
  @ApiOperation({
    operationId: 'adminPutIosStoreRail',
    summary: 'Configure the iOS store rail: bundle id, app Apple id, trusted roots (default: the store roots shipped with the service)',
  })
  @ApiOkResponse({ type: RailView })
  @ApiErrors({ 400: ['missing_required_param'] })
  putIosStore(@Param('projectId') projectId: string, @Body() body: PutIosStoreRailDto): Promise<RailView> {
    return this.rails.putIosStore(projectId, body);
  }

  @Get()
  @ApiOperation({
    operationId: 'adminListRails',
    summary: "The project's configured rails with their non-secret settings and whether their secrets are configured",
  })
  @ApiOkResponse({ type: RailList })
  list(@Param('projectId') projectId: string): Promise<RailList> {
    return this.rails.list(projectId);
  }
}

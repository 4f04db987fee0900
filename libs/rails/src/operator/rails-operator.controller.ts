import { Body, Controller, Get, Header, Inject, Param, Put, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { APP_CONFIG, type AppConfig, ApiErrors, Operator, operatorEnv, queryInt, queryString } from '#platform';
import { PURCHASE_RAILS } from '#entitlements';
import { PutIosStoreRailDto, RailList, RailView } from './rails-operator.dto.js';
import { RailsOperatorService } from './rails-operator.service.js';
import { RailsConsole } from './rails-console.service.js';
import { RailNotificationList } from './rails-console.views.js';

@ApiTags('operator')
@Operator()
@Controller('admin/v1/projects/:projectId/rails')
export class RailsOperatorController {
  constructor(
    private readonly rails: RailsOperatorService,
    private readonly console: RailsConsole,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

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
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({
    operationId: 'adminListRails',
    summary: "The project's configured rails with their non-secret settings and whether their secrets are configured",
    description:
      'rails (additive): every rail with its settings, which secrets are configured (booleans, never the secrets), the webhook URL ' +
      "to paste into the store's console (under PUBLIC_BASE_URL) and its latest 20 notifications in env.",
  })
  @ApiQuery({ name: 'env', required: false, enum: ['sandbox', 'production'], description: 'Default production' })
  @ApiOkResponse({ type: RailList })
  @ApiErrors({ 400: ['invalid_param_value'], 404: ['resource_missing'] })
  list(@Param('projectId') projectId: string, @Query('env') env?: string): Promise<RailList> {
    return this.rails.list(projectId, operatorEnv(env), this.config.publicBaseUrl);
  }

  @Get(':rail/notifications')
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({ operationId: 'adminListRailNotifications', summary: "A rail's notifications in env, newest first, with their decision" })
  @ApiParam({ name: 'rail', enum: PURCHASE_RAILS })
  @ApiQuery({ name: 'env', required: false, enum: ['sandbox', 'production'], description: 'Default production' })
  @ApiQuery({ name: 'limit', required: false, description: '1..100, default 20' })
  @ApiQuery({ name: 'before', required: false, description: 'The id of the last notification of the previous page' })
  @ApiOkResponse({ type: RailNotificationList })
  @ApiErrors({ 400: ['invalid_param_value'], 404: ['resource_missing'] })
  notifications(
    @Param('projectId') projectId: string,
    @Param('rail') rail: string,
    @Query('env') env?: string,
    @Query('limit') limit?: string,
    @Query('before') before?: string,
  ): Promise<RailNotificationList> {
    return this.console.notifications(projectId, operatorEnv(env), rail, queryInt(limit, 'limit', 1, 100, 20), queryString(before, 'before', 512));
  }
}

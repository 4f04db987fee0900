import { Body, Controller, Get, Header, HttpCode, Inject, Param, Post, Put, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { APP_CONFIG, type AppConfig, ApiErrors, Operator, operatorEnv, queryInt, queryString } from '#platform';
import { PURCHASE_RAILS } from '#entitlements';
import { PutIosStoreRailDto, RailList, RailView } from './rails-operator.dto.js';
import { RailsOperatorService } from './rails-operator.service.js';
import { RailsConsole, connectionView } from './rails-console.service.js';
import { RailConnectionView, RailNotificationList } from './rails-console.views.js';
import { RailConnectionTest } from './rail-connection-test.service.js';

@ApiTags('operator')
@Operator()
@Controller('admin/v1/projects/:projectId/rails')
export class RailsOperatorController {
  constructor(
    private readonly rails: RailsOperatorService,
    private readonly console: RailsConsole,
    private readonly connection: RailConnectionTest,
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

  @Post(':rail/test')
  @HttpCode(200)
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({
    operationId: 'adminTestRailConnection',
    summary: "Test connection: one harmless authenticated read with the rail's credentials; records when they last worked",
    description:
      'card_payments: customers.retrieve of an id no account holds (not found: the key works); ios_store: Get All Subscription Statuses of ' +
      'a transaction id no app holds (not found: the API key works); android_store: an access token from the service account and ' +
      'purchases.subscriptionsv2.get of a token no app holds (not found: the account works). 200 whether the store accepted the ' +
      'credentials or not (ok, message); missing credentials or settings are ok: false with the reason.',
  })
  @ApiParam({ name: 'rail', enum: PURCHASE_RAILS })
  @ApiQuery({ name: 'env', required: false, enum: ['sandbox', 'production'], description: 'Default production (recorded with the outcome)' })
  @ApiOkResponse({ type: RailConnectionView })
  @ApiErrors({ 400: ['invalid_param_value'], 404: ['resource_missing'] })
  async test(@Param('projectId') projectId: string, @Param('rail') rail: string, @Query('env') env?: string): Promise<RailConnectionView> {
    return connectionView(await this.connection.test(projectId, operatorEnv(env), rail));
  }
}

import { Body, Controller, Get, Header, Param, Put, Query, Req } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ApiErrors, type HttpRequest, Operator, operatorEnv, queryInt, queryString } from '#platform';
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
      "to paste into the store's console (from the request's scheme and host) and its latest 20 notifications in env.",
  })
  @ApiQuery({ name: 'env', required: false, enum: ['sandbox', 'production'], description: 'Default production' })
  @ApiOkResponse({ type: RailList })
  @ApiErrors({ 400: ['invalid_param_value'], 404: ['resource_missing'] })
  list(@Param('projectId') projectId: string, @Req() req: HttpRequest, @Query('env') env?: string): Promise<RailList> {
    return this.rails.list(projectId, operatorEnv(env), baseUrlOf(req));
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

/** Scheme and host of the request (there is no public base URL setting; a proxy's X-Forwarded-Proto is honoured). */
function baseUrlOf(req: HttpRequest): string {
  const forwarded = req.headers['x-forwarded-proto'];
  const proto = typeof forwarded === 'string' && /^https?$/.test(forwarded) ? forwarded : req.protocol;
  return `${proto}://${req.headers.host ?? 'localhost'}`;
}

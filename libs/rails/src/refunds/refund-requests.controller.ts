import { Body, Controller, Get, Header, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ApiErrors, Operator, RateLimit, TenantScopes, operatorEnv } from '#platform';
import { type AuthContext, CurrentKey, ProjectDirectory, RequireApiKey } from '#keys';
import { REFUND_REQUEST_STATES } from './consumption.js';
import { RefundRequestAnswerDto, RefundRequestList, RefundRequestView } from './refund-request.view.js';
import { RefundRequests, stateFilter } from './refund-requests.service.js';

const ID_PARAM = { name: 'id', description: 'The refund request id (cr_…)', example: 'cr_5f6b1c2d3e4f40a1b2c3d4e5f6a7b8c9' };
const STATE_QUERY = { name: 'state', required: false, enum: REFUND_REQUEST_STATES, description: 'Only requests in this state' };
const LIST_DESCRIPTION =
  "Apple refund requests (CONSUMPTION_REQUEST notifications) of the key's project and environment, newest first, at most 100; times in Unix seconds.";

@ApiTags('server')
@Controller('v1/server/refund-requests')
export class ServerRefundRequestsController {
  constructor(private readonly refunds: RefundRequests) {}

  @Get()
  @RequireApiKey({ kinds: ['secret'] })
  @RateLimit('entitlements')
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({ operationId: 'listRefundRequests', summary: 'List Apple refund requests (secret key only)', description: LIST_DESCRIPTION })
  @ApiQuery(STATE_QUERY)
  @ApiOkResponse({ type: RefundRequestList })
  @ApiErrors({ 400: ['invalid_param_value'] })
  list(@CurrentKey() auth: AuthContext, @Query('state') state?: string): Promise<RefundRequestList> {
    return this.refunds.list(auth, stateFilter(state));
  }

  @Post(':id/answer')
  @HttpCode(200)
  @RequireApiKey({ kinds: ['secret'] })
  // The purchases bucket: like a refresh, an answer makes the service call the store.
  @RateLimit('purchases')
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({
    operationId: 'answerRefundRequest',
    summary: 'Answer an Apple refund request with consumption information (secret key only)',
    description:
      'Sends the answer through the App Store Server API ("Send Consumption Information", delivery status delivered) at once and marks the ' +
      'request sent. customerConsented must be true (the store refuses any other answer): else 400 invalid_param_value. A request already ' +
      "sent or expired, or past its deadline: 400 invalid_param_value. Unknown id (or another project's): 404 resource_missing. The store " +
      'could not take it: 503 rail_unavailable (nothing recorded; retry).',
  })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: RefundRequestView })
  @ApiErrors({ 400: ['missing_required_param', 'invalid_param_value'], 404: ['resource_missing'], 503: ['rail_unavailable'] })
  answer(@CurrentKey() auth: AuthContext, @Param('id') id: string, @Body() body: RefundRequestAnswerDto): Promise<RefundRequestView> {
    return this.refunds.answer(auth, id, body);
  }
}

@ApiTags('operator')
@Operator()
@Controller('admin/v1/projects/:projectId/refund-requests')
export class OperatorRefundRequestsController {
  constructor(
    private readonly projects: ProjectDirectory,
    private readonly refunds: RefundRequests,
  ) {}

  @Get()
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({
    operationId: 'adminListRefundRequests',
    summary: "A project's Apple refund requests in env",
    description: `${LIST_DESCRIPTION.replace("of the key's project and environment", 'of the project in env')} Unknown project: 404 resource_missing.`,
  })
  @ApiQuery({ name: 'env', required: false, enum: ['sandbox', 'production'], description: 'Default production' })
  @ApiQuery(STATE_QUERY)
  @ApiOkResponse({ type: RefundRequestList })
  @ApiErrors({ 400: ['invalid_param_value'], 404: ['resource_missing'] })
  async list(@Param('projectId') projectId: string, @Query('env') env?: string, @Query('state') state?: string): Promise<RefundRequestList> {
    const scope = TenantScopes.operator(projectId, operatorEnv(env));
    const filter = stateFilter(state);
    await this.projects.assertExists(projectId);
    return this.refunds.list(scope, filter);
  }
}

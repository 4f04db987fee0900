import { Controller, Header, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ApiError, ApiErrors, type HttpRequest, Operator, RateLimit, TenantScopes, isEnv, requestIdOf } from '#platform';
import { type AuthContext, CurrentKey, ProjectDirectory, RequireApiKey } from '#keys';
import { CustomerRefresh } from './customer-refresh.service.js';
import { CustomerRefreshView } from './customer-refresh.view.js';

const CUSTOMER_PARAM = { name: 'customerId', description: 'Service customer id; must start with cdcust_', example: 'cdcust_3f9a0c1d2e4b' };
const DESCRIPTION =
  "Reads every rail id linked to the customer (card customer, iOS original transaction id, Android purchase token) from the rail's API " +
  'and applies what it holds like a notification (newest rail state wins; an audit entry with eventType reconciliation per read that changed ' +
  'something). Answers the entitlements afterwards; a rail that cannot be read is decision "unavailable" (still 200).';

@ApiTags('server')
@Controller('v1/server/customers')
export class ServerCustomerRefreshController {
  constructor(private readonly refresher: CustomerRefresh) {}

  @Post(':customerId/refresh')
  @HttpCode(200)
  @RequireApiKey({ kinds: ['secret'] })
  // The purchases bucket: like purchase sync, a refresh makes the service verify purchases with the stores.
  @RateLimit('purchases')
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({ operationId: 'refreshCustomer', summary: "Re-read the customer's purchases from the rails (secret key only)", description: DESCRIPTION })
  @ApiParam(CUSTOMER_PARAM)
  @ApiOkResponse({ type: CustomerRefreshView })
  @ApiErrors({ 400: ['invalid_customer'] })
  refresh(@CurrentKey() auth: AuthContext, @Param('customerId') customerId: string): Promise<CustomerRefreshView> {
    return this.refresher.refresh(auth, customerId, { actor: `api_key:${auth.keyId}`, requestId: auth.requestId }, () =>
      ApiError.invalidRequest('invalid_customer', `No customer ${customerId} in this project and environment`),
    );
  }
}

@ApiTags('operator')
@Operator()
@Controller('admin/v1/projects/:projectId/customers')
export class OperatorCustomerRefreshController {
  constructor(
    private readonly projects: ProjectDirectory,
    private readonly refresher: CustomerRefresh,
  ) {}

  @Post(':customerId/refresh')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'adminRefreshCustomer',
    summary: "Re-read a customer's purchases from the rails, in the environment named by env",
    description: DESCRIPTION,
  })
  @ApiParam(CUSTOMER_PARAM)
  @ApiQuery({ name: 'env', required: true, enum: ['sandbox', 'production'] })
  @ApiOkResponse({ type: CustomerRefreshView })
  @ApiErrors({ 400: ['invalid_param_value', 'invalid_customer'], 404: ['resource_missing'] })
  async refresh(
    @Req() req: HttpRequest,
    @Param('projectId') projectId: string,
    @Param('customerId') customerId: string,
    @Query('env') env?: string,
  ): Promise<CustomerRefreshView> {
    if (!isEnv(env)) throw ApiError.invalidParam('env must be sandbox or production');
    await this.projects.assertExists(projectId);
    return this.refresher.refresh(TenantScopes.operator(projectId, env), customerId, { actor: 'operator', requestId: requestIdOf(req) }, () =>
      ApiError.resourceMissing(`No customer ${customerId} in project ${projectId} (${env})`),
    );
  }
}

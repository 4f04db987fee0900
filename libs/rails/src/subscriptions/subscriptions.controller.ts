import { Controller, Get, Header, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ApiError, ApiErrors, Operator, RateLimit, TenantScopes, isEnv } from '#platform';
import { type AuthContext, CurrentKey, ProjectDirectory, RequireApiKey } from '#keys';
import { EntitlementsQueryDto, unknownCustomer } from '#entitlements';
import { SubscriptionReads } from './subscription-reads.service.js';
import { SubscriptionList } from './subscription.view.js';

const CUSTOMER_PARAM = { name: 'customerId', description: 'Service customer id; must start with cdcust_', example: 'cdcust_3f9a0c1d2e4b' };
const ORDER = 'Live subscriptions first, then the latest change first; at most 100.';

@ApiTags('subscriptions')
@Controller('v1/subscriptions')
export class SubscriptionsController {
  constructor(private readonly reads: SubscriptionReads) {}

  @Get()
  @RequireApiKey({ kinds: ['publishable', 'secret'] })
  @RateLimit('entitlements')
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({
    operationId: 'getSubscriptions',
    summary: 'Subscriptions and one-time purchases of one customer',
    description:
      'One customer hint exactly as GET /v1/entitlements takes it (customerId, serviceCustomerId or crossdeckCustomerId; userId; anonymousId), ' +
      'with either key kind. No hint: 400 missing_customer; customer id spellings naming different ids: 400 invalid_param_value; customerId ' +
      'without cdcust_: 400 invalid_customer. An unknown or forgotten customer is 200 with data [] and serviceCustomerId "". ' +
      `${ORDER} Rate-limited by the entitlements bucket.`,
  })
  @ApiOkResponse({ type: SubscriptionList })
  @ApiErrors({ 400: ['missing_customer', 'invalid_customer', 'invalid_param_value'] })
  list(@CurrentKey() auth: AuthContext, @Query() query: EntitlementsQueryDto): Promise<SubscriptionList> {
    return this.reads.publicRead(auth, query);
  }
}

@ApiTags('server')
@Controller('v1/server/customers')
export class ServerSubscriptionsController {
  constructor(private readonly reads: SubscriptionReads) {}

  @Get(':customerId/subscriptions')
  @RequireApiKey({ kinds: ['secret'] })
  @RateLimit('entitlements')
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({
    operationId: 'getCustomerSubscriptions',
    summary: "Read any customer's subscriptions (secret key only)",
    description: `Unknown customer or bad prefix: 400 invalid_customer. ${ORDER}`,
  })
  @ApiParam(CUSTOMER_PARAM)
  @ApiOkResponse({ type: SubscriptionList })
  @ApiErrors({ 400: ['invalid_customer'] })
  read(@CurrentKey() auth: AuthContext, @Param('customerId') customerId: string): Promise<SubscriptionList> {
    return this.reads.customerRead(auth, customerId, () => unknownCustomer(customerId));
  }
}

@ApiTags('operator')
@Operator()
@Controller('admin/v1/projects/:projectId/customers')
export class OperatorSubscriptionsController {
  constructor(
    private readonly projects: ProjectDirectory,
    private readonly reads: SubscriptionReads,
  ) {}

  @Get(':customerId/subscriptions')
  @ApiOperation({
    operationId: 'adminGetCustomerSubscriptions',
    summary: "A customer's subscriptions in the environment named by env",
    description: `Unknown project or customer: 404 resource_missing. ${ORDER}`,
  })
  @ApiParam(CUSTOMER_PARAM)
  @ApiQuery({ name: 'env', required: true, enum: ['sandbox', 'production'] })
  @ApiOkResponse({ type: SubscriptionList })
  @ApiErrors({ 400: ['invalid_param_value', 'invalid_customer'], 404: ['resource_missing'] })
  async read(@Param('projectId') projectId: string, @Param('customerId') customerId: string, @Query('env') env?: string): Promise<SubscriptionList> {
    if (!isEnv(env)) throw ApiError.invalidParam('env must be sandbox or production');
    await this.projects.assertExists(projectId);
    return this.reads.customerRead(TenantScopes.operator(projectId, env), customerId, () =>
      ApiError.resourceMissing(`No customer ${customerId} in project ${projectId} (${env})`),
    );
  }
}

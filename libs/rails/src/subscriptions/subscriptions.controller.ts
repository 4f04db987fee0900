import { Controller, Get, Header, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ApiError, ApiErrors, Operator, RateLimit, TenantScopes, isEnv, queryInt, queryString } from '#platform';
import { type AuthContext, CurrentKey, ProjectDirectory, RequireApiKey } from '#keys';
import { EntitlementsQueryDto, unknownCustomer } from '#entitlements';
import { SubscriptionReads } from './subscription-reads.service.js';
import { HistoryList, SubscriptionList } from './subscription.view.js';
import { HISTORY_DEFAULT_LIMIT, HISTORY_MAX_LIMIT, SubscriptionHistory } from './subscription-history.service.js';

const CUSTOMER_PARAM = { name: 'customerId', description: 'Service customer id; must start with cdcust_', example: 'cdcust_3f9a0c1d2e4b' };
const ORDER = 'Live subscriptions first, then the latest change first; at most 100.';
const HISTORY =
  "Every lifecycle event of the customer's subscriptions (the subscription.* webhook events and purchase.completed, recorded whether or " +
  "not the project has webhook endpoints), newest first by the rail's time; a merged customer's history holds the events of the customers " +
  'merged into it. Pages: pass the id of the last entry as before for the next, older page; hasMore says whether one remains.';
const LIMIT_QUERY = { name: 'limit', required: false, description: `1..${HISTORY_MAX_LIMIT}, default ${HISTORY_DEFAULT_LIMIT}` };
const BEFORE_QUERY = { name: 'before', required: false, description: 'The id (hist_…) of the last entry of the previous page' };

/** limit and before of a history read: 400 invalid_param_value naming the field. */
function historyPage(limit: unknown, before: unknown): { limit: number; before?: string } {
  return { limit: queryInt(limit, 'limit', 1, HISTORY_MAX_LIMIT, HISTORY_DEFAULT_LIMIT), before: queryString(before, 'before', 64) };
}

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
  constructor(
    private readonly reads: SubscriptionReads,
    private readonly history: SubscriptionHistory,
  ) {}

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

  @Get(':customerId/history')
  @RequireApiKey({ kinds: ['secret'] })
  @RateLimit('entitlements')
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({
    operationId: 'getCustomerHistory',
    summary: "A customer's subscription lifecycle events, newest first (secret key only)",
    description: `Unknown customer or bad prefix: 400 invalid_customer; limit outside 1..${HISTORY_MAX_LIMIT} or an unknown before: 400 invalid_param_value. ${HISTORY}`,
  })
  @ApiParam(CUSTOMER_PARAM)
  @ApiQuery(LIMIT_QUERY)
  @ApiQuery(BEFORE_QUERY)
  @ApiOkResponse({ type: HistoryList })
  @ApiErrors({ 400: ['invalid_customer', 'invalid_param_value'] })
  readHistory(
    @CurrentKey() auth: AuthContext,
    @Param('customerId') customerId: string,
    @Query('limit') limit?: string,
    @Query('before') before?: string,
  ): Promise<HistoryList> {
    const page = historyPage(limit, before);
    return this.history.customerHistory(auth, customerId, page, () => unknownCustomer(customerId));
  }
}

@ApiTags('operator')
@Operator()
@Controller('admin/v1/projects/:projectId/customers')
export class OperatorSubscriptionsController {
  constructor(
    private readonly projects: ProjectDirectory,
    private readonly reads: SubscriptionReads,
    private readonly history: SubscriptionHistory,
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

  @Get(':customerId/history')
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({
    operationId: 'adminGetCustomerHistory',
    summary: "A customer's subscription lifecycle events in the environment named by env, newest first",
    description: `Unknown project or customer: 404 resource_missing; limit outside 1..${HISTORY_MAX_LIMIT} or an unknown before: 400 invalid_param_value. ${HISTORY}`,
  })
  @ApiParam(CUSTOMER_PARAM)
  @ApiQuery({ name: 'env', required: true, enum: ['sandbox', 'production'] })
  @ApiQuery(LIMIT_QUERY)
  @ApiQuery(BEFORE_QUERY)
  @ApiOkResponse({ type: HistoryList })
  @ApiErrors({ 400: ['invalid_param_value', 'invalid_customer'], 404: ['resource_missing'] })
  async readHistory(
    @Param('projectId') projectId: string,
    @Param('customerId') customerId: string,
    @Query('env') env?: string,
    @Query('limit') limit?: string,
    @Query('before') before?: string,
  ): Promise<HistoryList> {
    if (!isEnv(env)) throw ApiError.invalidParam('env must be sandbox or production');
    const page = historyPage(limit, before);
    await this.projects.assertExists(projectId);
    return this.history.customerHistory(TenantScopes.operator(projectId, env), customerId, page, () =>
      ApiError.resourceMissing(`No customer ${customerId} in project ${projectId} (${env})`),
    );
  }
}

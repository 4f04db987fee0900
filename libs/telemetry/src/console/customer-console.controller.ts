import { Controller, Get, Header, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ApiError, ApiErrors, Operator, operatorEnv, queryInt, queryString } from '#platform';
import { CustomerConsoleReads } from './customer-console-reads.service.js';
import { CustomerDetailView, CustomerSearchList, CustomerTimelineView } from './customer-console.views.js';

const Q_MIN = 3;
const Q_MAX = 512;
const ENV_QUERY = { name: 'env', required: false, enum: ['sandbox', 'production'], description: 'Default production' } as const;

/** The operator console's customer pages (search, the customer page, its audit timeline). */
@ApiTags('operator')
@Operator()
@Controller('admin/v1/projects/:projectId/customers')
export class CustomerConsoleController {
  constructor(private readonly reads: CustomerConsoleReads) {}

  @Get()
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({
    operationId: 'adminSearchCustomers',
    summary: 'Find customers by exact developer user id, anonymous id, cdcust_ id, email, or rail id (original transaction id, cus_…, purchase token)',
  })
  @ApiQuery(ENV_QUERY)
  @ApiQuery({ name: 'q', required: true, description: `${Q_MIN}..${Q_MAX} characters, matched exactly` })
  @ApiQuery({ name: 'limit', required: false, description: '1..100, default 25' })
  @ApiOkResponse({ type: CustomerSearchList })
  @ApiErrors({ 400: ['invalid_param_value', 'missing_required_param'], 404: ['resource_missing'] })
  search(
    @Param('projectId') projectId: string,
    @Query('env') env?: string,
    @Query('q') q?: unknown,
    @Query('limit') limit?: string,
  ): Promise<CustomerSearchList> {
    if (q === undefined || q === '') throw ApiError.missingParam('q is required');
    if (typeof q !== 'string' || q.trim().length < Q_MIN || q.length > Q_MAX) throw ApiError.invalidParam(`q must be ${Q_MIN} to ${Q_MAX} characters`);
    return this.reads.search(projectId, operatorEnv(env), q.trim(), queryInt(limit, 'limit', 1, 100, 25));
  }

  @Get(':customerId')
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({
    operationId: 'adminGetCustomer',
    summary: 'The customer page in one call: identities, traits, entitlements (active and past), rail subscriptions, erasure status, latest events',
  })
  @ApiQuery(ENV_QUERY)
  @ApiOkResponse({ type: CustomerDetailView })
  @ApiErrors({ 400: ['invalid_param_value'], 404: ['resource_missing'] })
  detail(@Param('projectId') projectId: string, @Param('customerId') customerId: string, @Query('env') env?: string): Promise<CustomerDetailView> {
    return this.reads.detail(projectId, operatorEnv(env), customerId);
  }

  @Get(':customerId/timeline')
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({
    operationId: 'adminGetCustomerTimeline',
    summary: "The customer's audit entries newest first (notifications, grants, revokes, migration, reconciliation)",
  })
  @ApiQuery(ENV_QUERY)
  @ApiQuery({ name: 'limit', required: false, description: '1..100, default 25' })
  @ApiQuery({ name: 'before', required: false, description: 'The eventId of the last entry of the previous page' })
  @ApiOkResponse({ type: CustomerTimelineView })
  @ApiErrors({ 400: ['invalid_param_value'], 404: ['resource_missing'] })
  timeline(
    @Param('projectId') projectId: string,
    @Param('customerId') customerId: string,
    @Query('env') env?: string,
    @Query('limit') limit?: string,
    @Query('before') before?: string,
  ): Promise<CustomerTimelineView> {
    return this.reads.timeline(projectId, operatorEnv(env), customerId, queryInt(limit, 'limit', 1, 100, 25), queryString(before, 'before', 128));
  }
}

import { Controller, Get, Header, Param, Query, StreamableFile } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiProduces, ApiQuery, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { ApiError, ApiErrors, Operator, operatorEnv, queryInt, queryString } from '#platform';
import { CustomerConsoleReads } from './customer-console-reads.service.js';
import { CustomerDetailView, CustomerListPage, CustomerSearchList, CustomerTimelineView } from './customer-console.views.js';
import { CUSTOMER_SORTS, CUSTOMER_STATES, LIST_PARAMS, LIST_RAILS, decodeCursor, parseListFilter } from './customer-list-rules.js';

const Q_MIN = 3;
const Q_MAX = 512;
const ENV_QUERY = { name: 'env', required: false, enum: ['sandbox', 'production'], description: 'Default production' } as const;

/** The list's filters, shared by the list read and its CSV export. */
function ListQueries(): MethodDecorator {
  const decorators = [
    ApiQuery({
      name: 'state',
      required: false,
      enum: [...CUSTOMER_STATES],
      description:
        'Customers whose row carries this subscription state (expired: every subscription ended); billing_issue: any of in_grace_period, in_billing_retry, on_hold; churned: the same as expired',
    }),
    ApiQuery({ name: 'rail', required: false, enum: [...LIST_RAILS] }),
    ApiQuery({ name: 'product', required: false, description: 'Customers with a subscription of this product id' }),
    ApiQuery({ name: 'paying', required: false, enum: ['true', 'false'], description: "In the revenue ledger's paying set, or not" }),
    ApiQuery({ name: 'sort', required: false, enum: [...CUSTOMER_SORTS], description: 'Default created; ties broken by customer id' }),
    ApiQuery({ name: 'order', required: false, enum: ['asc', 'desc'], description: 'Default desc' }),
  ];
  return (target, key, descriptor) => {
    for (const d of decorators) d(target, key, descriptor);
  };
}

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
    summary: 'Find customers by exact id, or list every customer of the environment (partial search, filters, sorting, cursor pages)',
    description:
      'Without list parameters: customers whose developer user id, anonymous id, cdcust_ id, email or rail id (original transaction id, cus_…, purchase token) is exactly q, as a CustomerSearchList. ' +
      'With match=partial or any of state, rail, product, paying, sort, order, cursor: the customer list (CustomerListPage), where q (optional, case-insensitive) matches a prefix of the developer user id, ' +
      'the cdcust_ id or a rail id (original transaction id, sub_…, cus_…, purchase token), or any part of the email (its prefix under 3 characters).',
  })
  @ApiExtraModels(CustomerSearchList, CustomerListPage)
  @ApiQuery(ENV_QUERY)
  @ApiQuery({ name: 'q', required: false, description: `Exact search: ${Q_MIN}..${Q_MAX} characters, required. List: up to ${Q_MAX} characters, partial` })
  @ApiQuery({ name: 'match', required: false, enum: ['partial'], description: 'Selects the list' })
  @ListQueries()
  @ApiQuery({ name: 'cursor', required: false, description: 'The nextCursor of the previous page' })
  @ApiQuery({ name: 'limit', required: false, description: '1..100, default 25' })
  @ApiOkResponse({ schema: { anyOf: [{ $ref: getSchemaPath(CustomerSearchList) }, { $ref: getSchemaPath(CustomerListPage) }] } })
  @ApiErrors({ 400: ['invalid_param_value', 'missing_required_param'], 404: ['resource_missing'] })
  search(
    @Param('projectId') projectId: string,
    @Query() query: Record<string, unknown>,
    @Query('env') env?: string,
    @Query('q') q?: unknown,
    @Query('limit') limit?: string,
  ): Promise<CustomerSearchList | CustomerListPage> {
    if (LIST_PARAMS.some((name) => query[name] !== undefined)) {
      return this.reads.page(projectId, operatorEnv(env), parseListFilter(query), decodeCursor(query.cursor), queryInt(limit, 'limit', 1, 100, 25));
    }
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

/** The customer list as CSV: every row of the filtered list, streamed from a database cursor. */
@ApiTags('operator')
@Operator()
@Controller('admin/v1/projects/:projectId')
export class CustomerExportController {
  constructor(private readonly reads: CustomerConsoleReads) {}

  @Get('customers.csv')
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({
    operationId: 'adminExportCustomers',
    summary: 'The customer list (same q and filters as the list) as a CSV attachment, every row, streamed',
    description:
      'Columns: customer_id, user_id, email, states, rails, products, mrr_minor, currency, paying, last_seen_day, created_at. ' +
      "RFC 4180 quoting; a cell starting with =, +, -, @, a tab or a carriage return is prefixed with ' so that spreadsheets never run it.",
  })
  @ApiProduces('text/csv')
  @ApiQuery(ENV_QUERY)
  @ApiQuery({ name: 'q', required: false, description: 'Partial, case-insensitive, as the list' })
  @ListQueries()
  @ApiOkResponse({ description: 'text/csv', schema: { type: 'string' } })
  @ApiErrors({ 400: ['invalid_param_value'], 404: ['resource_missing'] })
  async export(@Param('projectId') projectId: string, @Query() query: Record<string, unknown>, @Query('env') env?: string): Promise<StreamableFile> {
    const resolved = operatorEnv(env);
    const csv = await this.reads.exportCsv(projectId, resolved, parseListFilter(query));
    return new StreamableFile(csv, { type: 'text/csv; charset=utf-8', disposition: `attachment; filename="customers-${resolved}.csv"` });
  }
}

import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '#platform';
import { type AuthContext, CurrentKey } from '#keys';
import type { ReadEnvelope } from '../read-envelope.js';
import { ReportingRead, SCOPED_READ_ERRORS } from '../reporting-read.decorator.js';
import { CustomerReadsService } from './customer-reads.service.js';
import {
  CrossmatchEnvelope,
  CrossmatchQueryDto,
  CustomersEnvelope,
  RankedEnvelope,
  RankedQueryDto,
  type CrossmatchData,
  type CustomersData,
  type RankedData,
} from './customers.dto.js';

@ApiTags('reporting')
@Controller()
export class CustomersController {
  constructor(private readonly customerReads: CustomerReadsService) {}

  @Get('v1/customers')
  @ReportingRead({ scopes: ['reporting:aggregate'] })
  @ApiOperation({
    operationId: 'getCustomerCensus',
    summary: 'Paying, total and active customers (scope: reporting:aggregate)',
    description: 'Counts only. payingCustomers is null while no rail is connected; activePeople is null while the activity rollup is not instrumented.',
  })
  @ApiOkResponse({ type: CustomersEnvelope })
  @ApiErrors(SCOPED_READ_ERRORS)
  customers(@CurrentKey() auth: AuthContext): Promise<ReadEnvelope<CustomersData>> {
    return this.customerReads.customers(auth);
  }

  @Get('v1/customers/ranked')
  @ReportingRead({ scopes: ['reporting:identity'] })
  @ApiOperation({
    operationId: 'listRankedCustomers',
    summary: 'Customers ranked by monthly revenue or read cost (scope: reporting:identity)',
    description:
      'Rows carry the caller’s own identifiers only (user ids, cdcust_ ids), never emails or names. by=read_cost answers no rows while read cost is not instrumented (coverage.readCost).',
  })
  @ApiOkResponse({ type: RankedEnvelope })
  @ApiErrors(SCOPED_READ_ERRORS)
  ranked(@CurrentKey() auth: AuthContext, @Query() query: RankedQueryDto): Promise<ReadEnvelope<RankedData>> {
    return this.customerReads.ranked(auth, query);
  }

  @Get('v1/crossmatch')
  @ReportingRead({ scopes: ['crossmatch:read'] })
  @ApiOperation({
    operationId: 'getCrossmatch',
    summary: 'One customer across identity, revenue, entitlements and read cost (scope: crossmatch:read)',
    description:
      'Exactly one of userId, anonymousId, customerId, appleOriginalTransactionId, googlePurchaseToken, stripeCustomerId (else 400 naming them). No match is 200 with customer: null.',
  })
  @ApiOkResponse({ type: CrossmatchEnvelope })
  @ApiErrors(SCOPED_READ_ERRORS)
  crossmatch(@CurrentKey() auth: AuthContext, @Query() query: CrossmatchQueryDto): Promise<ReadEnvelope<CrossmatchData>> {
    return this.customerReads.crossmatch(auth, query);
  }
}

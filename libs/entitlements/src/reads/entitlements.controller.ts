import { Controller, Get, Header, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, FastPath, RateLimit } from '#platform';
import { type AuthContext, CurrentKey, RequireApiKey, currentKeyOf } from '#keys';
import { EntitlementList } from '../domain/public-entitlement.js';
import { EntitlementsQueryDto, entitlementsQueryOf } from '../dto/entitlements-query.dto.js';
import { EntitlementQueries } from './entitlement-queries.service.js';

@ApiTags('entitlements')
@Controller('v1/entitlements')
export class EntitlementsController {
  constructor(private readonly queries: EntitlementQueries) {}

  @Get()
  @RequireApiKey({ kinds: ['publishable', 'secret'] })
  @RateLimit('entitlements')
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({
    operationId: 'getEntitlements',
    summary: 'Active entitlements of one customer',
    description:
      'A customer hint: customerId (the cdcust_ id identify returned; also spelt serviceCustomerId or crossdeckCustomerId), userId or ' +
      'anonymousId, with either key kind. A customer id wins over the others; userId with anonymousId reads the customer they resolve ' +
      "to (the userId's when they differ). No hint: 400 missing_customer; customer id spellings naming different ids: 400 " +
      'invalid_param_value; customerId without cdcust_: 400 invalid_customer. An unknown or ' +
      'forgotten customer, or one of another project or environment, is 200 with data [] and serviceCustomerId "". Rate-limited by the ' +
      'entitlements bucket.',
  })
  @ApiOkResponse({ type: EntitlementList })
  @ApiErrors({ 400: ['missing_customer', 'invalid_customer', 'invalid_param_value'] })
  // A hot read: served without Nest's per-request pipeline (docs/decisions/hot-reads-skip-nests-per-request-pipeline.md).
  @FastPath((req) => [currentKeyOf(req), entitlementsQueryOf(req.query as Record<string, unknown>)])
  list(@CurrentKey() auth: AuthContext, @Query() query: EntitlementsQueryDto): Promise<EntitlementList> {
    return this.queries.publicRead(auth, query);
  }
}

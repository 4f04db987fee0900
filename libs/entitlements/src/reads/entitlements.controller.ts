import { Controller, Get, Header, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../../../platform/src/index.js';
import { type AuthContext, CurrentKey, RequireApiKey } from '../../../keys/src/index.js';
import { EntitlementList } from '../domain/public-entitlement.js';
import { EntitlementsQueryDto } from '../dto/entitlements-query.dto.js';
import { EntitlementQueries } from './entitlement-queries.service.js';

@ApiTags('entitlements')
@Controller('v1/entitlements')
export class EntitlementsController {
  constructor(private readonly queries: EntitlementQueries) {}

  @Get()
  @RequireApiKey({ kinds: ['publishable', 'secret'] })
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({
    summary: 'Active entitlements of one customer',
    description:
      'Exactly one hint: customerId (secret keys only), userId or anonymousId. No hint: 400 missing_customer; several: 400 ' +
      'invalid_param_value; customerId without cdcust_ (or from a publishable key): 400 invalid_customer. An unknown or ' +
      'forgotten customer is 200 with data [] and serviceCustomerId "". Rate-limited by the entitlements bucket.',
  })
  @ApiOkResponse({ type: EntitlementList })
  @ApiErrors(400, 401, 403, 429)
  list(@CurrentKey() auth: AuthContext, @Query() query: EntitlementsQueryDto): Promise<EntitlementList> {
    return this.queries.publicRead(auth, query);
  }
}

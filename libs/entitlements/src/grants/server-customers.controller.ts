import { Body, Controller, Get, Header, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiErrors, FastPath, RateLimit } from '#platform';
import { type AuthContext, CurrentKey, RequireApiKey, currentKeyOf } from '#keys';
import { EntitlementList, EntitlementMutation } from '../domain/public-entitlement.js';
import { GrantEntitlementDto, RevokeEntitlementDto } from '../dto/entitlement-mutation.dto.js';
import { EntitlementQueries } from '../reads/entitlement-queries.service.js';
import { publicRefusalAnswer } from './manual-entitlement-answers.js';
import { ManualEntitlementService, type MutationActor } from './manual-entitlements.service.js';

const CUSTOMER_PARAM = { name: 'customerId', description: 'Service customer id; must start with cdcust_', example: 'cdcust_3f9a0c1d2e4b' };

function keyActor(auth: AuthContext): MutationActor {
  return { actor: `api_key:${auth.keyId}`, requestId: auth.requestId };
}

@ApiTags('server')
@Controller('v1/server/customers')
export class ServerCustomersController {
  constructor(
    private readonly queries: EntitlementQueries,
    private readonly manual: ManualEntitlementService,
  ) {}

  @Get(':customerId/entitlements')
  @RequireApiKey({ kinds: ['secret'] })
  @RateLimit('entitlements')
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({
    operationId: 'getCustomerEntitlements',
    summary: "Read any customer's active entitlements (secret key only)",
    description: 'Unknown customer or bad prefix: 400 invalid_customer.',
  })
  @ApiParam(CUSTOMER_PARAM)
  @ApiOkResponse({ type: EntitlementList })
  @ApiErrors({ 400: ['invalid_customer', 'invalid_param_value'] })
  // A hot read: served without Nest's per-request pipeline (docs/decisions/hot-reads-skip-nests-per-request-pipeline.md).
  @FastPath((req) => [currentKeyOf(req), (req.params as { customerId: string }).customerId])
  read(@CurrentKey() auth: AuthContext, @Param('customerId') customerId: string): Promise<EntitlementList> {
    return this.queries.serverRead(auth, customerId);
  }

  @Post(':customerId/grant')
  @HttpCode(200)
  @RequireApiKey({ kinds: ['secret'] })
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({
    operationId: 'grantEntitlement',
    summary: 'Manual grant (secret key only)',
    description:
      'One transaction: the manual entitlement becomes active and an audit entry (srv_grant_…) is written. On an active ' +
      'manual entitlement the later end wins (lifetime beats any date); a grant never shortens access.',
  })
  @ApiParam(CUSTOMER_PARAM)
  @ApiOkResponse({ type: EntitlementMutation })
  @ApiErrors({ 400: ['missing_required_param', 'invalid_customer'] })
  grant(@CurrentKey() auth: AuthContext, @Param('customerId') customerId: string, @Body() body: GrantEntitlementDto): Promise<EntitlementMutation> {
    return this.manual.grant(auth, customerId, body, keyActor(auth)).catch((err: unknown) => publicRefusalAnswer(err, customerId));
  }

  @Post(':customerId/revoke')
  @HttpCode(200)
  @RequireApiKey({ kinds: ['secret'] })
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({
    operationId: 'revokeEntitlement',
    summary: 'Manual revoke (secret key only)',
    description:
      'One transaction: the active manual entitlement becomes inactive and an audit entry (srv_revoke_…) is written. ' +
      '400 invalid_param_value when the key is rail-derived (cancel or refund on the rail), already revoked, expired or never granted.',
  })
  @ApiParam(CUSTOMER_PARAM)
  @ApiOkResponse({ type: EntitlementMutation })
  @ApiErrors({ 400: ['missing_required_param', 'invalid_customer'] })
  revoke(@CurrentKey() auth: AuthContext, @Param('customerId') customerId: string, @Body() body: RevokeEntitlementDto): Promise<EntitlementMutation> {
    return this.manual.revoke(auth, customerId, body, keyActor(auth)).catch((err: unknown) => publicRefusalAnswer(err, customerId));
  }
}

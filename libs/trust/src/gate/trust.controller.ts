import { Body, Controller, Get, Header, HttpCode, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, RateLimit } from '#platform';
import { type AuthContext, CurrentKey, RequireApiKey } from '#keys';
import { TrustGateDto, TrustGateView, TrustStatusQueryDto, TrustStatusView } from './trust.dto.js';
import { TrustGateService } from './trust-gate.service.js';

/**
 * The trust endpoints' rate-limit bucket: `alias` (10/s, burst 100, per project), the bucket
 * of identify. The gate and the status check run at sign-up and sign-in, beside identify,
 * and a block list must not be probed faster than identities can be linked.
 */
const TRUST_BUCKET = 'alias';

/** The trust endpoints answer their verdict at the top level of the body (the public clients read `blocked` and `action` there). */
@ApiTags('trust')
@Controller('v1/trust')
export class TrustController {
  constructor(private readonly gate: TrustGateService) {}

  @Get('status')
  @RequireApiKey({ kinds: ['secret'] })
  @RateLimit(TRUST_BUCKET)
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({
    operationId: 'getTrustStatus',
    summary: "An owner's block status by user id, email, domain or ip (secret key)",
    description:
      'At least one of userId, email, domain, ip. blocked with blockReason blocklist:<kind> and blockedKey <kind>:<value> when a block ' +
      'rule of the project matches; a block writes an audit entry (blockEventId, GET /v1/server/audit/{eventId}).',
  })
  @ApiOkResponse({ type: TrustStatusView })
  @ApiErrors({ 400: ['missing_required_param', 'invalid_param_value'], 429: ['rate_limited'] })
  status(@CurrentKey() auth: AuthContext, @Query() query: TrustStatusQueryDto): Promise<TrustStatusView> {
    return this.gate.status(auth, query);
  }

  @Post('gate')
  @HttpCode(200)
  @RequireApiKey({ kinds: ['publishable', 'secret'] })
  @RateLimit(TRUST_BUCKET)
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({
    operationId: 'trustGate',
    summary: 'The signup gate: allow, review or block by email, domain and ip',
    description:
      'At least one of email, ip, domain. A block rule: action block, allow false, band high, a support reference and an audit entry ' +
      '(blockEventId). An email domain under review: action review, band medium. Otherwise allow, band low.',
  })
  @ApiOkResponse({ type: TrustGateView })
  @ApiErrors({ 400: ['missing_required_param', 'invalid_param_value'], 429: ['rate_limited'] })
  check(@CurrentKey() auth: AuthContext, @Body() body: TrustGateDto): Promise<TrustGateView> {
    return this.gate.gate(auth, body);
  }
}

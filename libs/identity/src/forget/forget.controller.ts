import { Body, Controller, Header, HttpCode, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, RateLimit } from '#platform';
import { type AuthContext, CurrentKey, RequireApiKey } from '#keys';
import { ForgetDto, ForgotView } from './forget.dto.js';
import { ForgetService } from './forget.service.js';

@ApiTags('identity')
@Controller()
export class ForgetController {
  constructor(private readonly forgetService: ForgetService) {}

  @Post('v1/identity/forget')
  @HttpCode(200)
  @RequireApiKey({ kinds: ['publishable', 'secret'] })
  @RateLimit('forget')
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    operationId: 'forgetIdentity',
    summary: 'Right-to-be-forgotten request',
    description:
      'Identified erasure (customerId or userId) needs a secret key or a verified idToken whose subject equals userId; ' +
      'anonymous-only erasure needs no proof: with a secret key it erases the customer the device resolves to; with a publishable key, for a customer ' +
      'who has a developer user id, only the device is forgotten (scope "device", serviceCustomerId still names the customer). Idempotent. ' +
      'The customer reads as unknown at once and is erased by the retention worker within 30 days.',
  })
  @ApiOkResponse({ type: ForgotView })
  @ApiErrors({ 400: ['missing_required_param', 'invalid_param_value'], 401: ['identity_token_invalid'], 429: ['rate_limited'] })
  forget(@CurrentKey() auth: AuthContext, @Body() body: ForgetDto): Promise<ForgotView> {
    return this.forgetService.forget(auth, body);
  }
}

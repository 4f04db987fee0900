import { Body, Controller, Header, HttpCode, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, BodyLimit, RateLimit } from '#platform';
import { IDENTIFY_BODY_LIMIT_BYTES } from '../domain/traits.js';
import { type AuthContext, CurrentKey, RequireApiKey } from '#keys';
import { AliasResultView } from './alias-result.view.js';
import { IdentifyDto } from './identify.dto.js';
import { IdentifyService } from './identify.service.js';

@ApiTags('identity')
@Controller()
export class IdentifyController {
  constructor(private readonly identifyService: IdentifyService) {}

  @Post(['v1/identify', 'v1/identity/alias'])
  @HttpCode(200)
  @RequireApiKey({ kinds: ['publishable', 'secret'] })
  @RateLimit('alias')
  @BodyLimit(IDENTIFY_BODY_LIMIT_BYTES)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ operationId: 'identify', summary: 'Link an anonymous id to a developer user id (legacy alias: /v1/identity/alias)' })
  @ApiOkResponse({ type: AliasResultView })
  // A missing userId or anonymousId is invalid_param_value here (spec), not missing_required_param.
  @ApiErrors({ 400: ['invalid_param_value'], 401: ['identity_token_invalid'], 429: ['rate_limited'] })
  identify(@CurrentKey() auth: AuthContext, @Body() body: IdentifyDto): Promise<AliasResultView> {
    return this.identifyService.identify(auth, body);
  }
}

import { Body, Controller, Header, HttpCode, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '#platform';
import { type AuthContext, CurrentKey, RequireApiKey } from '#keys';
import { ResolveDto, ResolveResultView } from './resolve.dto.js';
import { ResolveService } from './resolve.service.js';

@ApiTags('identity')
@Controller()
export class ResolveController {
  constructor(private readonly resolveService: ResolveService) {}

  @Post('v1/resolve')
  @HttpCode(200)
  @RequireApiKey({ kinds: ['publishable', 'secret'] })
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({
    operationId: 'resolve',
    summary: 'Trust tier and recommended action',
    description:
      'Tier 3 (authenticated, enter): verified idToken for userId now. Tier 2 (recognized, one_tap or silent_refresh): known user and this device reached tier 3 within 90 days. ' +
      'Tier 1 (recognized, welcome_back): the device maps to a known user, or (secret key, no anonymousId) userId is a known user. ' +
      'Tier 0 (anonymous, onboard): otherwise. An invalid token never errors and never elevates. Tier 3 lists the active entitlement keys (strings).',
  })
  @ApiOkResponse({ type: ResolveResultView })
  @ApiErrors({ 400: ['invalid_param_value'] })
  resolve(@CurrentKey() auth: AuthContext, @Body() body: ResolveDto): Promise<ResolveResultView> {
    return this.resolveService.resolve(auth, body);
  }
}

import { Controller, Get, Header } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiSdkVersionHeaders, RateLimit, SdkVersionHeader } from '#platform';
import type { AuthContext } from '../auth/auth-context.js';
import { CurrentKey, RequireApiKey } from '../auth/require-api-key.decorator.js';
import { HeartbeatService } from './heartbeat.service.js';
import { HeartbeatView } from './heartbeat.view.js';

@ApiTags('sdk')
@Controller('v1/sdk/heartbeat')
export class HeartbeatController {
  constructor(private readonly heartbeats: HeartbeatService) {}

  @Get()
  @Header('Cache-Control', 'no-store')
  @RequireApiKey({ kinds: ['publishable', 'secret'], learnOrigin: true })
  @RateLimit('heartbeat')
  @ApiOperation({
    operationId: 'sdkHeartbeat',
    summary: 'Client install check (once per boot); the first heartbeat of a web app with an empty allowlist learns its origin',
  })
  @ApiSdkVersionHeaders('<name>@<version>; determines the client surface')
  @ApiOkResponse({ type: HeartbeatView })
  heartbeat(@CurrentKey() auth: AuthContext, @SdkVersionHeader() sdkVersion?: string): Promise<HeartbeatView> {
    return this.heartbeats.beat(auth, sdkVersion);
  }
}

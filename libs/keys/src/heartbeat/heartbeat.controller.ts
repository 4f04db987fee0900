import { Controller, Get, Header, Headers } from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../../../platform/src/index.js';
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
  @ApiOperation({ summary: 'Client install check (once per boot); the first heartbeat of a web app with an empty allowlist learns its origin' })
  @ApiHeader({ name: 'Service-Sdk-Version', required: false, description: '<name>@<version>; determines the client surface' })
  @ApiOkResponse({ type: HeartbeatView })
  @ApiErrors(429)
  heartbeat(@CurrentKey() auth: AuthContext, @Headers('service-sdk-version') sdkVersion?: string): Promise<HeartbeatView> {
    return this.heartbeats.beat(auth, sdkVersion);
  }
}

import { Controller, Get, Header } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context.js';
import { CurrentKey, RequireApiKey } from '../auth/require-api-key.decorator.js';
import { AppConfigService } from './app-config.service.js';
import { AppConfigView } from './app-config.view.js';

@ApiTags('config')
@Controller('v1/config')
export class AppConfigController {
  constructor(private readonly configs: AppConfigService) {}

  @Get()
  @Header('Cache-Control', 'public, max-age=60')
  @RequireApiKey({ kinds: ['publishable'] })
  @ApiOperation({ operationId: 'getConfig', summary: 'App configuration (publishable key only; a secret key is 401 invalid_api_key)' })
  @ApiOkResponse({ type: AppConfigView })
  config(@CurrentKey() auth: AuthContext): Promise<AppConfigView> {
    return this.configs.configFor(auth);
  }
}

import { Controller, Get, Header, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Clock } from '../clock/clock.js';
import { Public } from '../policy/route-policy.js';

export class HealthResponse {
  @ApiProperty({ example: 'ok' }) status: 'ok';
  @ApiProperty({ example: 'entitlements-v1' }) service: string;
  @ApiProperty({ description: 'Unix ms' }) timestamp: number;
  @ApiProperty({ example: 'local' }) region: string;
}

@ApiTags('platform')
@Public()
@Controller('v1/healthz')
export class HealthController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  @Get()
  @Header('Cache-Control', 'no-store')
  @Header('Access-Control-Allow-Origin', '*')
  @ApiOperation({ operationId: 'getHealth', summary: 'Health probe (no auth)' })
  @ApiOkResponse({ type: HealthResponse })
  health(): HealthResponse {
    return { status: 'ok', service: `${this.config.serviceName}-v1`, timestamp: this.clock.nowMs(), region: this.config.region };
  }
}

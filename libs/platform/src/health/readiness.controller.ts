import { Controller, Get, Header, HttpStatus, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '../policy/route-policy.js';
import { Readiness, type ReadinessReport, notReadyReason } from './readiness.js';
import { setLogCode } from '../errors/error-response.js';
import type { HttpResponse } from '../http/http-types.js';

export class ReadinessChecks {
  @ApiProperty({ enum: ['ok', 'down'], example: 'ok' }) database: 'ok' | 'down';
  @ApiProperty({
    enum: ['ok', 'pending'],
    example: 'ok',
    description: 'pending until every migration of this version of the service is applied (the migration command, or MIGRATIONS_RUN=true)',
  })
  migrations: 'ok' | 'pending';
  @ApiProperty({ enum: ['ok', 'down', 'not_configured'], example: 'ok', description: 'Reported only: Redis never fails readiness (the limiter fails open)' })
  redis: 'ok' | 'down' | 'not_configured';
}

export class ReadinessResponse {
  @ApiProperty({ enum: ['ready', 'not_ready'], example: 'ready' }) status: 'ready' | 'not_ready';
  @ApiProperty({ type: ReadinessChecks }) checks: ReadinessChecks;
}

@ApiTags('platform')
@Public()
@Controller('v1/readyz')
export class ReadinessController {
  constructor(private readonly readiness: Readiness) {}

  @Get()
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    operationId: 'getReadiness',
    summary: 'Readiness probe (no auth): PostgreSQL answers within 1 s, its schema is migrated to this version, and the replica is not shutting down',
  })
  @ApiOkResponse({ type: ReadinessResponse })
  @ApiServiceUnavailableResponse({
    type: ReadinessResponse,
    description: 'not_ready: PostgreSQL did not answer within 1 s, migrations are pending, or SIGTERM received',
  })
  async ready(@Res({ passthrough: true }) res: HttpResponse): Promise<ReadinessReport> {
    const report = await this.readiness.check();
    const reason = notReadyReason(report, this.readiness.shuttingDown);
    res.status(reason === null ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE);
    // The 503's access-log line says why (the body keeps the probe's own shape, no envelope).
    if (reason !== null) setLogCode(res, reason);
    return report;
  }
}

import { Controller, Get, Header } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiProperty, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { Clock } from '../clock/clock.js';
import { Public } from '../policy/route-policy.js';
import { SdkVersionPolicy } from './sdk-version-policy.js';
import { SDK_SURFACES } from './sdk-versions.js';

export class SurfaceVersionsView {
  @ApiProperty({ example: '@service/web' }) name: string;
  @ApiProperty({ example: '1.6.0' }) latest: string;
  @ApiProperty({ example: '0.3.0', description: 'Wire-format floor a 426 would name' }) minSupported: string;
}

export class SdkVersionsResponse {
  @ApiProperty({ example: 'sdk_versions' }) object: 'sdk_versions';
  @ApiProperty({
    type: 'object',
    additionalProperties: { $ref: getSchemaPath(SurfaceVersionsView) },
    description: 'Per surface: web, node, swift, react-native, android',
  })
  surfaces: Record<string, SurfaceVersionsView>;
  @ApiProperty({ description: 'Unix ms' }) generatedAt: number;
}

@ApiTags('platform')
@Public()
@ApiExtraModels(SurfaceVersionsView)
@Controller('v1/sdk/versions')
export class SdkVersionsController {
  constructor(
    private readonly policy: SdkVersionPolicy,
    private readonly clock: Clock,
  ) {}

  @Get()
  @Header('Cache-Control', 'public, max-age=300')
  @Header('Access-Control-Allow-Origin', '*')
  @ApiOperation({ operationId: 'getSdkVersions', summary: 'Client version manifest (no auth)' })
  @ApiOkResponse({ type: SdkVersionsResponse })
  versions(): SdkVersionsResponse {
    const surfaces: Record<string, SurfaceVersionsView> = {};
    for (const surface of SDK_SURFACES) {
      const { name, latest, minSupported } = this.policy.manifest[surface];
      surfaces[surface] = { name, latest, minSupported };
    }
    return { object: 'sdk_versions', surfaces, generatedAt: this.clock.nowMs() };
  }
}

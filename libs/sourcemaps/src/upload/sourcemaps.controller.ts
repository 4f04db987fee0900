import { Body, Controller, Header, HttpCode, Post } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, BodyLimit, SOURCEMAPS_BODY_LIMIT_BYTES } from '../../../platform/src/index.js';
import { type AuthContext, CurrentKey, RequireApiKey } from '../../../keys/src/index.js';
import { SourceMapBatchView, SourceMapUploadDto } from './sourcemap-upload.dto.js';
import { UploadSourceMapsService } from './upload-sourcemaps.service.js';

@ApiTags('releases')
@Controller('v1/releases/sourcemaps')
export class SourceMapsController {
  constructor(private readonly uploads: UploadSourceMapsService) {}

  @Post()
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @RequireApiKey({ kinds: ['secret'] })
  @BodyLimit(SOURCEMAPS_BODY_LIMIT_BYTES)
  @ApiOperation({
    operationId: 'uploadSourceMaps',
    summary: 'Source-map batch upload (secret key only)',
    description:
      'Stores 1 to 100 base64-encoded version-3 source maps for a release, each identified by (release, environment, fileUrl). ' +
      'Per-file failures (invalid_runtime_url, missing_sourcemap, invalid_sourcemap, sourcemap_too_large: over 16 MiB decoded) become ' +
      'error rows and never fail the batch. The same map again is `skipped`; a different one replaces it (`replaced: true`).',
  })
  @ApiBody({ type: SourceMapUploadDto })
  @ApiOkResponse({ type: SourceMapBatchView })
  @ApiErrors({ 400: ['missing_required_param', 'invalid_release'], 403: ['env_mismatch'] })
  upload(@CurrentKey() auth: AuthContext, @Body() body: unknown): Promise<SourceMapBatchView> {
    return this.uploads.upload(auth, body);
  }
}

import { Controller, Header, HttpCode, Post, Req } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, BodyLimit, type HttpRequest, RateLimit, SOURCEMAPS_BODY_LIMIT_BYTES, rawBodyOf } from '#platform';
import { type AuthContext, CurrentKey, RequireApiKey } from '#keys';
import { SourceMapBatchView, SourceMapUploadDto } from './sourcemap-upload.dto.js';
import { UploadSourceMapsService } from './upload-sourcemaps.service.js';
import { SOURCEMAP_UPLOAD_ADMISSION } from './upload-admission.service.js';

@ApiTags('releases')
@Controller('v1/releases/sourcemaps')
export class SourceMapsController {
  constructor(private readonly uploads: UploadSourceMapsService) {}

  @Post()
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @RequireApiKey({ kinds: ['secret'] })
  @RateLimit('sourcemaps')
  @BodyLimit(SOURCEMAPS_BODY_LIMIT_BYTES, { admission: SOURCEMAP_UPLOAD_ADMISSION })
  @ApiOperation({
    operationId: 'uploadSourceMaps',
    summary: 'Source-map batch upload (secret key only)',
    description:
      'Stores 1 to 100 base64-encoded version-3 source maps for a release, each identified by (release, environment, fileUrl). ' +
      'Per-file failures (invalid_runtime_url, missing_sourcemap, invalid_sourcemap, sourcemap_too_large: over 16 MiB decoded) become ' +
      'error rows and never fail the batch. The same map again is `skipped`; a different one replaces it (`replaced: true`). ' +
      'Each project has its own bucket (429 rate_limited); each replica decodes a few uploads at once and keeps the others waiting briefly, ' +
      'then answers 503 upload_capacity with Retry-After.',
  })
  @ApiBody({ type: SourceMapUploadDto })
  @ApiOkResponse({ type: SourceMapBatchView })
  @ApiErrors({ 400: ['missing_required_param', 'invalid_release'], 403: ['env_mismatch'], 503: ['upload_capacity'] })
  upload(@CurrentKey() auth: AuthContext, @Req() req: HttpRequest): Promise<SourceMapBatchView> {
    return this.uploads.upload(auth, rawBodyOf(req));
  }
}

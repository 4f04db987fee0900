import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/*
 * OpenAPI documentation only. The handler takes the body as `unknown`: per-file failures
 * must become result rows instead of failing the batch, which the global ValidationPipe
 * cannot express, so the rules live in sourcemap-upload.rules.ts.
 */

export class SourceMapFileDto {
  @ApiProperty({
    example: 'https://app.example.com/static/main.js',
    description: 'Any scheme:// URL (app:///, webpack://, https://), at most 2048 characters.',
  })
  fileUrl: string;

  @ApiPropertyOptional({ description: 'Ignored: the server recomputes it (SHA-256 hex of fileUrl).' })
  fileUrlHash?: string;

  @ApiProperty({ description: 'Base64 of the version-3 source map JSON (plain or index map with sections); at most 16 MiB decoded.' })
  sourceMap: string;
}

export class SourceMapUploadDto {
  @ApiProperty({ example: '2.4.1', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9._-]{1,64}$' })
  release: string;

  @ApiProperty({ enum: ['production', 'sandbox'], description: "Must be the key's environment (else 403 env_mismatch)." })
  environment: string;

  @ApiProperty({ type: [SourceMapFileDto], minItems: 1, maxItems: 100 })
  files: SourceMapFileDto[];
}

export class SourceMapFileErrorView {
  @ApiProperty({ enum: ['invalid_runtime_url', 'missing_sourcemap', 'invalid_sourcemap', 'sourcemap_too_large'] })
  code: string;

  @ApiProperty()
  message: string;
}

export class SourceMapResultView {
  @ApiProperty({ type: 'integer', description: 'Position of the file in the request.' })
  index: number;

  @ApiProperty({ type: String, nullable: true, description: 'As sent (null when it was not a string).' })
  fileUrl: string | null;

  @ApiProperty({ enum: ['uploaded', 'skipped', 'error'], description: '`skipped`: the same map was already stored for this release and file URL.' })
  status: 'uploaded' | 'skipped' | 'error';

  @ApiProperty({ type: SourceMapFileErrorView, nullable: true })
  error: SourceMapFileErrorView | null;

  @ApiProperty({ type: String, nullable: true, description: 'SHA-256 (hex) of fileUrl, computed by the server; null when fileUrl is invalid.' })
  fileUrlHash: string | null;

  @ApiProperty({ type: 'integer', nullable: true, description: 'Decoded size of the map in bytes; null on error rows.' })
  size: number | null;

  @ApiProperty({ description: 'True when this upload replaced a different map stored for the same release and file URL.' })
  replaced: boolean;
}

export class SourceMapBatchView {
  @ApiProperty({ example: 'sourcemap_batch' })
  object: 'sourcemap_batch';

  @ApiProperty()
  release: string;

  @ApiProperty({ enum: ['production', 'sandbox'] })
  environment: string;

  @ApiProperty({ type: 'integer', description: 'Maps stored (new or replacing).' })
  uploaded: number;

  @ApiProperty({ type: 'integer', description: 'Maps identical to the stored ones.' })
  skipped: number;

  @ApiProperty({ type: [SourceMapResultView], description: 'The error rows of `results`.' })
  errors: SourceMapResultView[];

  @ApiProperty({ type: [SourceMapResultView], description: 'One row per file, in request order.' })
  results: SourceMapResultView[];
}

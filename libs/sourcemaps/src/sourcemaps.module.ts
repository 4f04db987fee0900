import { Module } from '@nestjs/common';
import { KeysModule } from '#keys';
import { SOURCE_MAP_STORE } from './storage/source-map-store.js';
import { SourceMapsRepository } from './storage/source-maps.repository.js';
import { SourceMapSymbolicator } from './symbolication/source-map-symbolicator.service.js';
import { SourceMapsController } from './upload/sourcemaps.controller.js';
import { UploadSourceMapsService } from './upload/upload-sourcemaps.service.js';
import { DecodePool } from './upload/decode-pool.js';
import { SourceMapUploadAdmission } from './upload/upload-admission.service.js';

/** Release source maps: the upload endpoint, their storage, and lazy symbolication of stack frames. */
@Module({
  imports: [KeysModule],
  controllers: [SourceMapsController],
  providers: [
    UploadSourceMapsService,
    DecodePool,
    SourceMapUploadAdmission,
    SourceMapsRepository,
    { provide: SOURCE_MAP_STORE, useExisting: SourceMapsRepository },
    SourceMapSymbolicator,
  ],
  exports: [SourceMapSymbolicator],
})
export class SourceMapsModule {}

import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, ApiError, type AppConfig, type HttpRequest, RoutePolicyHooks, SOURCEMAPS_BODY_LIMIT_BYTES } from '#platform';
import { UploadAdmission } from './upload-admission.js';

/** The name POST /v1/releases/sourcemaps declares in its @BodyLimit. */
export const SOURCEMAP_UPLOAD_ADMISSION = 'sourcemaps';

/**
 * Registers the per-replica cap of source-map uploads with the route policy: after the key and
 * the project's bucket, before any byte of the body is read (config SOURCEMAP_UPLOAD_*).
 */
@Injectable()
export class SourceMapUploadAdmission implements OnModuleInit {
  readonly admission: UploadAdmission;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly hooks: RoutePolicyHooks,
  ) {
    this.admission = new UploadAdmission({
      concurrency: config.sourcemapUploadConcurrency,
      bytesInFlight: config.sourcemapUploadBytesInFlight,
      queueMs: config.sourcemapUploadQueueMs,
    });
  }

  onModuleInit(): void {
    this.hooks.registerBodyAdmission(SOURCEMAP_UPLOAD_ADMISSION, (req) => this.admit(req));
  }

  private async admit(req: HttpRequest): Promise<() => void> {
    // The declared length (checked against the route limit already); a body without one counts as the limit.
    const header = req.raw.headers['content-length'];
    const bytes = header !== undefined && /^\d+$/.test(header) ? Number(header) : SOURCEMAPS_BODY_LIMIT_BYTES;
    const release = await this.admission.acquire(bytes, (ms, onTimeout) => {
      const timer = setTimeout(onTimeout, ms);
      return () => clearTimeout(timer);
    });
    if (!release) {
      throw new ApiError(503, 'internal_error', 'upload_capacity', 'Too many source-map uploads on this server; retry later', undefined, {
        'Retry-After': '5',
        Connection: 'close',
      });
    }
    return release;
  }
}

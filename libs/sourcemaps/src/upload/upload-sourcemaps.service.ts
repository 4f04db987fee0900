import { Inject, Injectable } from '@nestjs/common';
import { APP_LOGGER, ApiError, type AppLogger, Clock, type TenantScope } from '#platform';
import { SOURCE_MAP_STORE, type SourceMapStore } from '../storage/source-map-store.js';
import { DecodePool } from './decode-pool.js';
import type { DecodedUploadFile } from './sourcemap-decode.js';
import type { SourceMapBatchView, SourceMapResultView } from './sourcemap-upload.dto.js';
import { MAX_FILES_PER_BATCH, checkFileUrl, fileUrlHash, fileUrlOf, readUploadRequest } from './sourcemap-upload.rules.js';

/**
 * POST /v1/releases/sourcemaps. The body arrives as bytes: a worker thread (DecodePool) parses
 * it and decodes, checks, hashes and compresses every map, off the event loop. Then the
 * request-level rules on what it returned (the batch is refused as a whole), and the files in
 * order: per-file failures become rows, the same map again is skipped, the others are stored.
 */
@Injectable()
export class UploadSourceMapsService {
  constructor(
    private readonly clock: Clock,
    private readonly pool: DecodePool,
    @Inject(SOURCE_MAP_STORE) private readonly store: SourceMapStore,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  async upload(scope: TenantScope, rawBody: Buffer): Promise<SourceMapBatchView> {
    const decoded = await this.pool.decode(rawBody, MAX_FILES_PER_BATCH);
    if (!decoded.ok) throw ApiError.invalidParam(decoded.reason === 'not_json' ? 'Malformed JSON in request body' : 'Request body must be a JSON object');
    const { release, environment } = readUploadRequest(scope, { release: decoded.release, environment: decoded.environment, files: decoded.files });
    const files = decoded.decoded!;

    // Digests of the maps already stored for the batch's valid URLs, in one query.
    const hashes = files.map((file, i) => (checkFileUrl(i, file.entry) === null ? fileUrlHash(fileUrlOf(file.entry)!) : null));
    const stored = await this.store.digests(
      scope,
      release,
      hashes.filter((h): h is string => h !== null),
    );

    const results: SourceMapResultView[] = [];
    for (let i = 0; i < files.length; i++) {
      results.push(await this.uploadOne(scope, release, i, files[i], hashes[i], stored));
    }
    const uploaded = results.filter((r) => r.status === 'uploaded').length;
    const skipped = results.filter((r) => r.status === 'skipped').length;
    this.logger.info({ projectId: scope.projectId, env: scope.env, release, files: files.length, uploaded, skipped }, 'source maps uploaded');
    return {
      object: 'sourcemap_batch',
      release,
      environment,
      uploaded,
      skipped,
      errors: results.filter((r) => r.status === 'error'),
      results,
    };
  }

  private async uploadOne(
    scope: TenantScope,
    release: string,
    index: number,
    file: DecodedUploadFile,
    hash: string | null,
    stored: Map<string, string>,
  ): Promise<SourceMapResultView> {
    const fileUrl = fileUrlOf(file.entry);
    const urlFailure = checkFileUrl(index, file.entry);
    if (urlFailure !== null || hash === null || fileUrl === null) {
      const failure = urlFailure ?? { code: 'invalid_runtime_url', message: `files[${index}].fileUrl is invalid` };
      return { index, fileUrl, status: 'error', error: failure, fileUrlHash: null, size: null, replaced: false };
    }
    const map = file.map;
    if (!map.ok) {
      return { index, fileUrl, status: 'error', error: { code: map.code, message: map.message }, fileUrlHash: hash, size: null, replaced: false };
    }
    const row = { index, fileUrl, error: null, fileUrlHash: hash, size: map.size };
    const previous = stored.get(hash);
    if (previous === map.contentSha256) return { ...row, status: 'skipped', replaced: false };
    const outcome = await this.store.put(
      scope,
      {
        release,
        fileUrl,
        fileUrlHash: hash,
        contentSha256: map.contentSha256,
        sizeBytes: map.size,
        encoding: 'br',
        body: Buffer.from(map.compressed.buffer, map.compressed.byteOffset, map.compressed.byteLength),
      },
      this.clock.nowMs(),
    );
    stored.set(hash, map.contentSha256);
    if (outcome === 'unchanged') return { ...row, status: 'skipped', replaced: false };
    return { ...row, status: 'uploaded', replaced: outcome === 'replaced' };
  }
}

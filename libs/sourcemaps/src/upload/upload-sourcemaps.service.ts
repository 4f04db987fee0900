import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib } from 'node:zlib';
import { APP_LOGGER, ApiError, type AppLogger, Clock, type TenantScope } from '#platform';
import { SOURCE_MAP_STORE, type SourceMapStore } from '../storage/source-map-store.js';
import type { SourceMapBatchView, SourceMapResultView } from './sourcemap-upload.dto.js';
import { checkFileUrl, decodeSourceMap, fileUrlHash, fileUrlOf, readUploadRequest } from './sourcemap-upload.rules.js';

const compress = promisify(brotliCompress);
/** Brotli quality 5: most of the ratio of 11 at a small fraction of its CPU (maps are JSON text). */
const BROTLI_QUALITY = 5;

/**
 * POST /v1/releases/sourcemaps. Request-level rules first (the batch is refused as a
 * whole), then the files one at a time: decode, check, hash, compress and store one map
 * before touching the next, dropping each entry's base64 from the parsed body once read, so
 * the memory of a large batch is the body plus one map. Per-file failures become rows.
 */
@Injectable()
export class UploadSourceMapsService {
  constructor(
    private readonly clock: Clock,
    @Inject(SOURCE_MAP_STORE) private readonly store: SourceMapStore,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  async upload(scope: TenantScope, body: unknown): Promise<SourceMapBatchView> {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw ApiError.invalidParam('Request body must be a JSON object');
    const { release, environment, files } = readUploadRequest(scope, body as Record<string, unknown>);

    // Digests of the maps already stored for the batch's valid URLs, in one query.
    const hashes = files.map((entry, i) => (checkFileUrl(i, entry) === null ? fileUrlHash(fileUrlOf(entry)!) : null));
    const stored = await this.store.digests(
      scope,
      release,
      hashes.filter((h): h is string => h !== null),
    );

    const results: SourceMapResultView[] = [];
    for (let i = 0; i < files.length; i++) {
      const entry = files[i];
      files[i] = undefined; // the base64 text can be collected as soon as this file is done
      results.push(await this.uploadOne(scope, release, i, entry, hashes[i], stored));
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
    entry: unknown,
    hash: string | null,
    stored: Map<string, string>,
  ): Promise<SourceMapResultView> {
    const fileUrl = fileUrlOf(entry);
    const urlFailure = checkFileUrl(index, entry);
    if (urlFailure !== null || hash === null || fileUrl === null) {
      const failure = urlFailure ?? { code: 'invalid_runtime_url', message: `files[${index}].fileUrl is invalid` };
      return { index, fileUrl, status: 'error', error: failure, fileUrlHash: null, size: null, replaced: false };
    }
    const decoded = decodeSourceMap(index, (entry as Record<string, unknown>).sourceMap);
    if (!decoded.ok) {
      return { index, fileUrl, status: 'error', error: { code: decoded.code, message: decoded.message }, fileUrlHash: hash, size: null, replaced: false };
    }
    const size = decoded.bytes.length;
    const contentSha256 = createHash('sha256').update(decoded.bytes).digest('hex');
    const row = { index, fileUrl, error: null, fileUrlHash: hash, size };
    const previous = stored.get(hash);
    if (previous === contentSha256) return { ...row, status: 'skipped', replaced: false };

    const compressed = await compress(decoded.bytes, {
      params: {
        [zlib.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
        [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT,
        [zlib.BROTLI_PARAM_SIZE_HINT]: size,
      },
    });
    const outcome = await this.store.put(
      scope,
      { release, fileUrl, fileUrlHash: hash, contentSha256, sizeBytes: size, encoding: 'br', body: compressed },
      this.clock.nowMs(),
    );
    stored.set(hash, contentSha256);
    if (outcome === 'unchanged') return { ...row, status: 'skipped', replaced: false };
    return { ...row, status: 'uploaded', replaced: outcome === 'replaced' };
  }
}

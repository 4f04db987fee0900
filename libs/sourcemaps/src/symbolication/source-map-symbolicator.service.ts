import { Inject, Injectable, Optional } from '@nestjs/common';
import { promisify } from 'node:util';
import { brotliDecompress } from 'node:zlib';
import type { TraceMap } from '@jridgewell/trace-mapping';
import { APP_LOGGER, type AppLogger, type TenantScope } from '#platform';
import { SOURCE_MAP_STORE, type SourceMapStore } from '../storage/source-map-store.js';
import { MAX_SOURCEMAP_BYTES, fileUrlHash } from '../upload/sourcemap-upload.rules.js';
import { parseSourceMapText } from './source-map-document.js';
import { LruCache } from './lru-cache.js';
import { type OriginalPosition, originalPosition, traceMapOf } from './source-map-resolver.js';

const decompress = promisify(brotliDecompress);

/** A minified stack position: the file URL as the runtime reported it, 1-based line and column. */
export interface GeneratedPosition {
  fileUrl: string;
  line: number;
  column: number;
}

/** What the telemetry context consumes (bound to its own token there, no import cycle). */
export interface FrameSymbolicator {
  /** One answer per position, in order: the original position, or null when no map resolves it. */
  symbolicate(scope: TenantScope, release: string, positions: readonly GeneratedPosition[]): Promise<(OriginalPosition | null)[]>;
}

export interface SymbolicationLimits {
  /** Parsed maps kept in memory. */
  maxCachedMaps: number;
  /** Estimated memory of the parsed maps kept (decoded map size x PARSED_COST_FACTOR). */
  maxCachedBytes: number;
  /** A stored map larger than this, decoded, is never parsed (it stays unresolved). */
  maxMapBytes: number;
  /** Distinct maps one call may load (the rest of its positions stay unresolved). */
  maxMapsPerCall: number;
}

export const SYMBOLICATION_LIMITS = Symbol('SYMBOLICATION_LIMITS');

export const DEFAULT_SYMBOLICATION_LIMITS: SymbolicationLimits = {
  maxCachedMaps: 64,
  maxCachedBytes: 256 * 1024 * 1024,
  maxMapBytes: MAX_SOURCEMAP_BYTES,
  maxMapsPerCall: 16,
};

/** A parsed map costs a few times its JSON text once its mappings are decoded. */
export const PARSED_COST_FACTOR = 3;
/** A map that failed to load is remembered (by digest) at this nominal cost. */
const FAILED_MAP_COST = 1024;

interface CachedMap {
  contentSha256: string;
  /** Null when the stored map could not be loaded (too large, corrupt): not retried until replaced. */
  map: TraceMap | null;
}

const RELEASE = /^[A-Za-z0-9._-]{1,64}$/;

/** The file URL without its query string and fragment (`main.js?v=3#x` → `main.js`), or null if it has none. */
export function withoutQuery(fileUrl: string): string | null {
  const cut = fileUrl.search(/[?#]/);
  return cut === -1 ? null : fileUrl.slice(0, cut);
}

/**
 * Lazy symbolication: maps are read from the store only when an error is read, parsed once
 * and kept in a bounded LRU cache per (project, env, release, file URL). Each call asks the
 * store for the current digests of the maps it needs (one query), so a map replaced through
 * any replica is reloaded instead of served stale.
 */
@Injectable()
export class SourceMapSymbolicator implements FrameSymbolicator {
  private readonly limits: SymbolicationLimits;
  private readonly cache: LruCache<string, CachedMap>;

  constructor(
    @Inject(SOURCE_MAP_STORE) private readonly store: SourceMapStore,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
    @Optional() @Inject(SYMBOLICATION_LIMITS) limits?: Partial<SymbolicationLimits>,
  ) {
    this.limits = { ...DEFAULT_SYMBOLICATION_LIMITS, ...limits };
    this.cache = new LruCache(this.limits.maxCachedMaps, this.limits.maxCachedBytes);
  }

  /** Parsed maps currently cached (count and estimated bytes). */
  cacheStats(): { maps: number; bytes: number } {
    return { maps: this.cache.size, bytes: this.cache.cost };
  }

  async symbolicate(scope: TenantScope, release: string, positions: readonly GeneratedPosition[]): Promise<(OriginalPosition | null)[]> {
    const answers: (OriginalPosition | null)[] = positions.map(() => null);
    if (positions.length === 0 || !RELEASE.test(release)) return answers;

    // Each position: the file URL as reported, then without its query string / fragment.
    const candidates = positions.map((p) => {
      const stripped = withoutQuery(p.fileUrl);
      return stripped === null ? [fileUrlHash(p.fileUrl)] : [fileUrlHash(p.fileUrl), fileUrlHash(stripped)];
    });
    const digests = await this.store.digests(scope, release, candidates.flat());
    if (digests.size === 0) return answers;

    const maps = new Map<string, TraceMap | null>();
    for (let i = 0; i < positions.length; i++) {
      const hash = candidates[i].find((h) => digests.has(h));
      if (hash === undefined) continue;
      if (!maps.has(hash)) {
        if (maps.size >= this.limits.maxMapsPerCall) continue;
        maps.set(hash, await this.load(scope, release, hash, digests.get(hash)!));
      }
      const map = maps.get(hash);
      if (map) answers[i] = this.resolve(map, positions[i]);
    }
    return answers;
  }

  private resolve(map: TraceMap, position: GeneratedPosition): OriginalPosition | null {
    try {
      return originalPosition(map, position.line, position.column);
    } catch {
      // Corrupt VLQ data surfaces only when the mappings are decoded.
      return null;
    }
  }

  private async load(scope: TenantScope, release: string, hash: string, contentSha256: string): Promise<TraceMap | null> {
    const key = `${scope.projectId}|${scope.env}|${release}|${hash}`;
    const cached = this.cache.get(key);
    if (cached !== undefined && cached.contentSha256 === contentSha256) return cached.map;

    const stored = await this.store.get(scope, { release, fileUrlHash: hash });
    if (stored === null) return null;
    let map: TraceMap | null = null;
    let cost = FAILED_MAP_COST;
    if (stored.sizeBytes > this.limits.maxMapBytes) {
      this.logger.warn(
        { projectId: scope.projectId, env: scope.env, release, fileUrlHash: hash, sizeBytes: stored.sizeBytes },
        'source map over the size limit: not loaded',
      );
    } else {
      try {
        const text = (await decompress(stored.body, { maxOutputLength: this.limits.maxMapBytes })).toString('utf8');
        const parsed = parseSourceMapText(text);
        if (parsed.ok) {
          map = traceMapOf(parsed.document);
          cost = Math.max(FAILED_MAP_COST, text.length * PARSED_COST_FACTOR);
        } else {
          this.logger.warn({ projectId: scope.projectId, env: scope.env, release, fileUrlHash: hash, reason: parsed.reason }, 'stored source map is invalid');
        }
      } catch (err) {
        this.logger.warn(
          { projectId: scope.projectId, env: scope.env, release, fileUrlHash: hash, err: (err as Error).message },
          'stored source map could not be loaded',
        );
      }
    }
    this.cache.set(key, { contentSha256: stored.contentSha256, map }, cost);
    return map;
  }
}

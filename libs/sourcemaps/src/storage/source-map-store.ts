import type { TenantScope } from '#platform';

/** Where a map's identity is: (project, environment) from the scope, plus these two. */
export interface SourceMapKey {
  release: string;
  /** SHA-256 (hex) of the file URL, computed by the server. */
  fileUrlHash: string;
}

export interface StoredSourceMapInput extends SourceMapKey {
  fileUrl: string;
  /** SHA-256 (hex) of the decoded map. */
  contentSha256: string;
  /** Decoded size in bytes. */
  sizeBytes: number;
  encoding: 'br';
  /** The compressed map. */
  body: Buffer;
}

export interface StoredSourceMap extends SourceMapKey {
  contentSha256: string;
  sizeBytes: number;
  encoding: 'br';
  body: Buffer;
}

/** What a write did: a new map, a different map replacing one, or the same map again. */
export type PutOutcome = 'inserted' | 'replaced' | 'unchanged';

/**
 * Storage of compressed source maps. The PostgreSQL implementation keeps them in `bytea`;
 * an object store would implement the same four calls (the digests stay in PostgreSQL).
 */
export interface SourceMapStore {
  /** Content digests of the maps that exist among `fileUrlHashes` (map from file URL hash). */
  digests(scope: TenantScope, release: string, fileUrlHashes: readonly string[]): Promise<Map<string, string>>;
  /** Inserts or replaces; a map with the same digest is left alone ('unchanged'). */
  put(scope: TenantScope, map: StoredSourceMapInput, nowMs: number): Promise<PutOutcome>;
  /** The stored map, compressed, or null. */
  get(scope: TenantScope, key: SourceMapKey): Promise<StoredSourceMap | null>;
}

export const SOURCE_MAP_STORE = Symbol('SOURCE_MAP_STORE');

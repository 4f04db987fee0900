import { Injectable } from '@nestjs/common';
import { Sql, type TenantScope } from '#platform';
import type { PutOutcome, SourceMapKey, SourceMapStore, StoredSourceMap, StoredSourceMapInput } from './source-map-store.js';

/** The default SourceMapStore: compressed maps in a PostgreSQL `bytea` column. */
@Injectable()
export class SourceMapsRepository implements SourceMapStore {
  constructor(private readonly sql: Sql) {}

  async digests(scope: TenantScope, release: string, fileUrlHashes: readonly string[]): Promise<Map<string, string>> {
    if (fileUrlHashes.length === 0) return new Map();
    const rows = await this.sql.rows<{ fileUrlHash: string; contentSha256: string }>(
      `SELECT file_url_hash AS "fileUrlHash", content_sha256 AS "contentSha256"
         FROM source_maps
        WHERE project_id = $1 AND env = $2 AND release = $3 AND file_url_hash = ANY($4::text[])`,
      [scope.projectId, scope.env, release, [...new Set(fileUrlHashes)]],
    );
    return new Map(rows.map((r) => [r.fileUrlHash, r.contentSha256]));
  }

  /**
   * One upsert: a new key inserts, a different digest replaces (the row says which through
   * xmax), the same digest touches nothing and returns no row. Concurrent uploads of the
   * same file settle on the primary key.
   */
  async put(scope: TenantScope, map: StoredSourceMapInput, nowMs: number): Promise<PutOutcome> {
    const rows = await this.sql.rows<{ inserted: boolean }>(
      `INSERT INTO source_maps AS s (project_id, env, release, file_url_hash, file_url, content_sha256, size_bytes, encoding, body, created_at_ms, updated_at_ms)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)
       ON CONFLICT (project_id, env, release, file_url_hash) DO UPDATE SET
         file_url = EXCLUDED.file_url, content_sha256 = EXCLUDED.content_sha256, size_bytes = EXCLUDED.size_bytes,
         encoding = EXCLUDED.encoding, body = EXCLUDED.body, updated_at_ms = EXCLUDED.updated_at_ms
       WHERE s.content_sha256 <> EXCLUDED.content_sha256
       RETURNING (xmax = 0) AS inserted`,
      [scope.projectId, scope.env, map.release, map.fileUrlHash, map.fileUrl, map.contentSha256, map.sizeBytes, map.encoding, map.body, nowMs],
    );
    if (rows.length === 0) return 'unchanged';
    return rows[0].inserted ? 'inserted' : 'replaced';
  }

  async get(scope: TenantScope, key: SourceMapKey): Promise<StoredSourceMap | null> {
    return this.sql.one<StoredSourceMap>(
      `SELECT release, file_url_hash AS "fileUrlHash", content_sha256 AS "contentSha256", size_bytes AS "sizeBytes", encoding, body
         FROM source_maps
        WHERE project_id = $1 AND env = $2 AND release = $3 AND file_url_hash = $4`,
      [scope.projectId, scope.env, key.release, key.fileUrlHash],
    );
  }
}

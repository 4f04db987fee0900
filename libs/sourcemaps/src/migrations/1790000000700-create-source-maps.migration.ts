import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Release source maps. One row per (project, environment, release, file URL); the file URL
 * is keyed by its SHA-256 (`file_url_hash`, recomputed by the server) so the key stays short
 * whatever the URL's length. `body` holds the map compressed by the service (Brotli), so
 * PostgreSQL is told not to try compressing it again (STORAGE EXTERNAL: out of line, as is).
 * `content_sha256` is the digest of the decoded map: an identical re-upload is skipped, and
 * the symbolication cache of every replica notices a replaced map by it.
 */
export class CreateSourceMaps1790000000700 implements MigrationInterface {
  name = 'CreateSourceMaps1790000000700';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE source_maps (
        project_id     text    NOT NULL,
        env            text    NOT NULL CONSTRAINT source_maps_env_ck CHECK (env IN ('sandbox', 'production')),
        release        text    NOT NULL CONSTRAINT source_maps_release_ck CHECK (release ~ '^[A-Za-z0-9._-]{1,64}$'),
        file_url_hash  text    NOT NULL CONSTRAINT source_maps_file_url_hash_ck CHECK (file_url_hash ~ '^[0-9a-f]{64}$'),
        file_url       text    NOT NULL,
        content_sha256 text    NOT NULL CONSTRAINT source_maps_content_sha256_ck CHECK (content_sha256 ~ '^[0-9a-f]{64}$'),
        size_bytes     integer NOT NULL CONSTRAINT source_maps_size_ck CHECK (size_bytes >= 0),
        encoding       text    NOT NULL CONSTRAINT source_maps_encoding_ck CHECK (encoding IN ('br')),
        body           bytea   NOT NULL,
        created_at_ms  bigint  NOT NULL,
        updated_at_ms  bigint  NOT NULL,
        CONSTRAINT source_maps_pk PRIMARY KEY (project_id, env, release, file_url_hash)
      )`);
    await q.query(`ALTER TABLE source_maps ALTER COLUMN body SET STORAGE EXTERNAL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS source_maps`);
  }
}

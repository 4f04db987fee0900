import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A version per project's trust settings, raised by every replace: replicas cache the
 * settings and compare this one column (a primary-key read) instead of reloading the lists.
 */
export class TrustSettingsVersion1790000002510 implements MigrationInterface {
  name = 'TrustSettingsVersion1790000002510';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE trust_settings ADD COLUMN version bigint NOT NULL DEFAULT 1 CONSTRAINT trust_settings_version_ck CHECK (version >= 1)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE trust_settings DROP COLUMN IF EXISTS version`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The `sourcemaps` rate-limit bucket (POST /v1/releases/sourcemaps) may be overridden per project like the others. */
export class KeysSourcemapsBucket1790000000990 implements MigrationInterface {
  name = 'KeysSourcemapsBucket1790000000990';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE project_rate_limits DROP CONSTRAINT IF EXISTS project_rate_limits_bucket_check`);
    await q.query(
      `ALTER TABLE project_rate_limits ADD CONSTRAINT project_rate_limits_bucket_check
         CHECK (bucket IN ('events', 'purchases', 'entitlements', 'heartbeat', 'forget', 'alias', 'sourcemaps'))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM project_rate_limits WHERE bucket = 'sourcemaps'`);
    await q.query(`ALTER TABLE project_rate_limits DROP CONSTRAINT IF EXISTS project_rate_limits_bucket_check`);
    await q.query(
      `ALTER TABLE project_rate_limits ADD CONSTRAINT project_rate_limits_bucket_check
         CHECK (bucket IN ('events', 'purchases', 'entitlements', 'heartbeat', 'forget', 'alias'))`,
    );
  }
}

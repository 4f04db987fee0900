import type { MigrationInterface, QueryRunner } from 'typeorm';

const BEFORE = `'events', 'purchases', 'entitlements', 'heartbeat', 'forget', 'alias', 'sourcemaps', 'reads'`;
const RAIL_READS = `'rail_reads_card_payments', 'rail_reads_ios_store', 'rail_reads_android_store'`;

/** The per-project rates of the service's reads of each store's API may be overridden like the other buckets. */
export class KeysRailReadBuckets1790000002310 implements MigrationInterface {
  name = 'KeysRailReadBuckets1790000002310';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE project_rate_limits DROP CONSTRAINT project_rate_limits_bucket_check`);
    await q.query(`ALTER TABLE project_rate_limits ADD CONSTRAINT project_rate_limits_bucket_check CHECK (bucket IN (${BEFORE}, ${RAIL_READS}))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM project_rate_limits WHERE bucket IN (${RAIL_READS})`);
    await q.query(`ALTER TABLE project_rate_limits DROP CONSTRAINT project_rate_limits_bucket_check`);
    await q.query(`ALTER TABLE project_rate_limits ADD CONSTRAINT project_rate_limits_bucket_check CHECK (bucket IN (${BEFORE}))`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Erasures now run as durable jobs (identity.erase_customer). Erasures queued before this
 * release get their job here, so none is left behind.
 */
export class ErasureJobs1790000000910 implements MigrationInterface {
  name = 'ErasureJobs1790000000910';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      INSERT INTO jobs (type, project_id, env, payload, dedupe_key, max_attempts, run_at_ms, created_at_ms, updated_at_ms)
      SELECT 'identity.erase_customer', e.project_id, e.env, jsonb_build_object('customerId', e.customer_id),
             e.project_id || ':' || e.env || ':' || e.customer_id, 20, 0,
             (extract(epoch FROM now()) * 1000)::bigint, (extract(epoch FROM now()) * 1000)::bigint
        FROM erasures e WHERE e.status = 'queued'
      ON CONFLICT DO NOTHING`);
  }

  async down(): Promise<void> {
    // Nothing to undo: the jobs are consumed or harmless.
  }
}

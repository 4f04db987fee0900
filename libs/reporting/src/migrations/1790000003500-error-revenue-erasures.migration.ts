import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When a scope last had a customer erased (service clock), kept beside the error revenue
 * snapshots: an erasure removes the scope's snapshots, and a snapshot whose computation began
 * before it (its lookups may have read the erased user) is not stored afterwards. The refresh
 * job works paced, so a computation can span an erasure by seconds.
 */
export class ErrorRevenueErasures1790000003500 implements MigrationInterface {
  name = 'ErrorRevenueErasures1790000003500';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE error_revenue_erasures (
        project_id   text   NOT NULL,
        env          text   NOT NULL CONSTRAINT error_revenue_erasures_env_ck CHECK (env IN ('sandbox', 'production')),
        erased_at_ms bigint NOT NULL,
        CONSTRAINT error_revenue_erasures_pk PRIMARY KEY (project_id, env)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS error_revenue_erasures`);
  }
}

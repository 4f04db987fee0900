import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The operator console finds customers by their email trait and lists the merge reviews that
 * name a customer on either side: index probes, never scans of the scope.
 */
export class ConsoleCustomerIndexes1790000002610 implements MigrationInterface {
  name = 'ConsoleCustomerIndexes1790000002610';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX IF NOT EXISTS customers_scope_email_idx ON customers (project_id, env, email) WHERE email IS NOT NULL`);
    await q.query(`CREATE INDEX IF NOT EXISTS merge_reviews_canonical_idx ON merge_reviews (project_id, env, canonical_customer_id)`);
    await q.query(`CREATE INDEX IF NOT EXISTS merge_reviews_other_idx ON merge_reviews (project_id, env, other_customer_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS merge_reviews_other_idx`);
    await q.query(`DROP INDEX IF EXISTS merge_reviews_canonical_idx`);
    await q.query(`DROP INDEX IF EXISTS customers_scope_email_idx`);
  }
}

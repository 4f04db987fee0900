import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The console's customer list searches partially and case-insensitively: a prefix of the
 * lower-cased `cdcust_` id, email or alias value (developer user id, rail ids) is a btree range
 * (`text_pattern_ops`, so LIKE 'x%' uses it whatever the database collation); a substring of
 * the email is a `pg_trgm` GIN probe, whose rows the statement then bounds to the scope (a
 * trigram index cannot lead with (project_id, env) without `btree_gin`: the one index here that
 * does not start with them). The list's default order (newest first) walks
 * `customers_scope_created_idx`.
 */
export class CustomerListSearch1790000003710 implements MigrationInterface {
  name = 'CustomerListSearch1790000003710';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);
    await q.query(`CREATE INDEX IF NOT EXISTS customers_scope_id_prefix_idx ON customers (project_id, env, lower(id) text_pattern_ops)`);
    await q.query(
      `CREATE INDEX IF NOT EXISTS customers_scope_email_prefix_idx ON customers (project_id, env, lower(email) text_pattern_ops) WHERE email IS NOT NULL`,
    );
    await q.query(`CREATE INDEX IF NOT EXISTS customers_email_trgm_idx ON customers USING gin (lower(email) gin_trgm_ops) WHERE email IS NOT NULL`);
    await q.query(`CREATE INDEX IF NOT EXISTS customers_scope_created_idx ON customers (project_id, env, created_at DESC, id DESC)`);
    await q.query(
      `CREATE INDEX IF NOT EXISTS customer_aliases_scope_value_prefix_idx ON customer_aliases (project_id, env, type, lower(value) text_pattern_ops)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS customer_aliases_scope_value_prefix_idx`);
    await q.query(`DROP INDEX IF EXISTS customers_scope_created_idx`);
    await q.query(`DROP INDEX IF EXISTS customers_email_trgm_idx`);
    await q.query(`DROP INDEX IF EXISTS customers_scope_email_prefix_idx`);
    await q.query(`DROP INDEX IF EXISTS customers_scope_id_prefix_idx`);
  }
}

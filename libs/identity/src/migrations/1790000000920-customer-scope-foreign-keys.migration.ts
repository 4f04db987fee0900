import type { MigrationInterface, QueryRunner } from 'typeorm';
import { addCustomerScopeForeignKey } from './customer-scope-foreign-key.js';

/**
 * Tenant integrity by the database: identity's own tables point at a customer through the
 * composite key (project_id, env, customer_id) -> customers (project_id, env, id), backed by
 * the unique index customers_scope_id_uq, so a row can never name another tenant's customer
 * (other project or other environment). The single-column `REFERENCES customers (id)` keys
 * are dropped: the composite key implies them (customers.id is the primary key).
 *
 * Added NOT VALID (a short lock, new writes checked at once), then validated against the
 * existing rows; a tenant-crossing row already stored fails the migration, naming the key.
 */
export class CustomerScopeForeignKeys1790000000920 implements MigrationInterface {
  name = 'CustomerScopeForeignKeys1790000000920';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE customer_aliases DROP CONSTRAINT IF EXISTS customer_aliases_customer_id_fkey`);
    await q.query(`ALTER TABLE merge_reviews DROP CONSTRAINT IF EXISTS merge_reviews_canonical_customer_id_fkey`);
    await q.query(`ALTER TABLE merge_reviews DROP CONSTRAINT IF EXISTS merge_reviews_other_customer_id_fkey`);
    await q.query(`ALTER TABLE erasures DROP CONSTRAINT IF EXISTS erasures_customer_id_fkey`);
    await addCustomerScopeForeignKey(q, 'customer_aliases', 'customer_aliases_customer_fk');
    await addCustomerScopeForeignKey(q, 'merge_reviews', 'merge_reviews_canonical_customer_fk', 'canonical_customer_id');
    await addCustomerScopeForeignKey(q, 'merge_reviews', 'merge_reviews_other_customer_fk', 'other_customer_id');
    await addCustomerScopeForeignKey(q, 'erasures', 'erasures_customer_fk');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE erasures DROP CONSTRAINT IF EXISTS erasures_customer_fk`);
    await q.query(`ALTER TABLE merge_reviews DROP CONSTRAINT IF EXISTS merge_reviews_other_customer_fk`);
    await q.query(`ALTER TABLE merge_reviews DROP CONSTRAINT IF EXISTS merge_reviews_canonical_customer_fk`);
    await q.query(`ALTER TABLE customer_aliases DROP CONSTRAINT IF EXISTS customer_aliases_customer_fk`);
    await q.query(`ALTER TABLE customer_aliases ADD FOREIGN KEY (customer_id) REFERENCES customers (id)`);
    await q.query(`ALTER TABLE merge_reviews ADD FOREIGN KEY (canonical_customer_id) REFERENCES customers (id)`);
    await q.query(`ALTER TABLE merge_reviews ADD FOREIGN KEY (other_customer_id) REFERENCES customers (id)`);
    await q.query(`ALTER TABLE erasures ADD FOREIGN KEY (customer_id) REFERENCES customers (id)`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';
import { addCustomerScopeForeignKey } from '#identity';

/**
 * Tenant integrity by the database: `device_bindings.customer_id` points at its customer through the
 * composite key (project_id, env, customer_id) -> customers (project_id, env, id), backed by
 * identity's unique index customers_scope_id_uq, so a row can never name another tenant's
 * customer (other project or other environment). The single-column key to customers (id) is dropped: the composite key implies it.
 *
 * Added NOT VALID (a short lock, new writes checked at once), then validated against the
 * existing rows; a tenant-crossing row already stored fails the migration, naming the key.
 */
export class CustomerScopeForeignKey1790000000921 implements MigrationInterface {
  name = 'CustomerScopeForeignKey1790000000921';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE device_bindings DROP CONSTRAINT IF EXISTS device_bindings_customer_id_fkey`);
    await addCustomerScopeForeignKey(q, 'device_bindings', 'device_bindings_customer_fk');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE device_bindings DROP CONSTRAINT IF EXISTS device_bindings_customer_fk`);
    await q.query(`ALTER TABLE device_bindings ADD FOREIGN KEY (customer_id) REFERENCES customers (id)`);
  }
}

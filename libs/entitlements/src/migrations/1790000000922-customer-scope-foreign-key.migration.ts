import type { MigrationInterface, QueryRunner } from 'typeorm';
import { addCustomerScopeForeignKey } from '#identity';

/**
 * Tenant integrity by the database: `entitlements.customer_id` points at its customer through the
 * composite key (project_id, env, customer_id) -> customers (project_id, env, id), backed by
 * identity's unique index customers_scope_id_uq, so a row can never name another tenant's
 * customer (other project or other environment). Until now entitlements had no key to customers at all.
 *
 * Added NOT VALID (a short lock, new writes checked at once), then validated against the
 * existing rows; a tenant-crossing row already stored fails the migration, naming the key.
 */
export class CustomerScopeForeignKey1790000000922 implements MigrationInterface {
  name = 'CustomerScopeForeignKey1790000000922';

  async up(q: QueryRunner): Promise<void> {
    await addCustomerScopeForeignKey(q, 'entitlements', 'entitlements_customer_fk');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE entitlements DROP CONSTRAINT IF EXISTS entitlements_customer_fk`);
  }
}

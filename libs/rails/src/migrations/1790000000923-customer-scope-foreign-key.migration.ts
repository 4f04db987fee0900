import type { MigrationInterface, QueryRunner } from 'typeorm';
import { addCustomerScopeForeignKey } from '#identity';

/**
 * Tenant integrity by the database: `rail_notifications.customer_id` points at its customer through the
 * composite key (project_id, env, customer_id) -> customers (project_id, env, id), backed by
 * identity's unique index customers_scope_id_uq, so a row can never name another tenant's
 * customer (other project or other environment). The customer is NULL until the notification is matched to one (MATCH SIMPLE: a NULL is not checked); rail_subscriptions and rail_transactions have had this key since they were created.
 *
 * Added NOT VALID (a short lock, new writes checked at once), then validated against the
 * existing rows; a tenant-crossing row already stored fails the migration, naming the key.
 */
export class CustomerScopeForeignKey1790000000923 implements MigrationInterface {
  name = 'CustomerScopeForeignKey1790000000923';

  async up(q: QueryRunner): Promise<void> {
    await addCustomerScopeForeignKey(q, 'rail_notifications', 'rail_notifications_customer_fk');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE rail_notifications DROP CONSTRAINT IF EXISTS rail_notifications_customer_fk`);
  }
}

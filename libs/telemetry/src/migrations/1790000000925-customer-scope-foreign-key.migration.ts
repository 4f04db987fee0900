import type { MigrationInterface, QueryRunner } from 'typeorm';
import { addCustomerScopeForeignKey } from '#identity';

/**
 * Tenant integrity by the database: `event_identity_hints.customer_id` points at its customer through the
 * composite key (project_id, env, customer_id) -> customers (project_id, env, id), backed by
 * identity's unique index customers_scope_id_uq, so a row can never name another tenant's
 * customer (other project or other environment). The customer is NULL until the resolver finds it (MATCH SIMPLE: a NULL is not checked). The partitioned `events` table deliberately has no such key (docs/decisions/no-foreign-key-on-events-or-audit-entries-customer-id.md).
 *
 * Added NOT VALID (a short lock, new writes checked at once), then validated against the
 * existing rows; a tenant-crossing row already stored fails the migration, naming the key.
 */
export class CustomerScopeForeignKey1790000000925 implements MigrationInterface {
  name = 'CustomerScopeForeignKey1790000000925';

  async up(q: QueryRunner): Promise<void> {
    await addCustomerScopeForeignKey(q, 'event_identity_hints', 'event_identity_hints_customer_fk');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE event_identity_hints DROP CONSTRAINT IF EXISTS event_identity_hints_customer_fk`);
  }
}

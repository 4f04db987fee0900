import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Which transaction gave each customer's `sequence` its last number, and which one the number
 * before: a change whose entitlements were read before that earlier writer committed knows
 * its list may lack that writer's change, and reads the list again under the counter's lock.
 * Rows written before these columns leave them empty (their writers committed long ago).
 */
export class WebhooksSequenceWriters1790000003300 implements MigrationInterface {
  name = 'WebhooksSequenceWriters1790000003300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_customer_sequences ADD COLUMN last_xact xid8, ADD COLUMN previous_xact xid8`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_customer_sequences DROP COLUMN IF EXISTS previous_xact, DROP COLUMN IF EXISTS last_xact`);
  }
}

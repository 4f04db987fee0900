import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Which transaction last took each customer's counter, and which other one took it before: a
 * change whose entitlements were read before that other writer committed knows its list may
 * lack that writer's change, and reads the list again under the counter's lock. A change that
 * writes rows without changing the announced set takes the counter without a number, so a
 * customer's first counter row may hold 0. Rows written before these columns leave them empty
 * (their writers committed long ago).
 */
export class WebhooksSequenceWriters1790000003300 implements MigrationInterface {
  name = 'WebhooksSequenceWriters1790000003300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_customer_sequences ADD COLUMN last_xact xid8, ADD COLUMN previous_xact xid8`);
    await q.query(`ALTER TABLE webhook_customer_sequences DROP CONSTRAINT webhook_customer_sequences_seq_ck,
                     ADD CONSTRAINT webhook_customer_sequences_seq_ck CHECK (last_sequence >= 0)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM webhook_customer_sequences WHERE last_sequence = 0`);
    await q.query(`ALTER TABLE webhook_customer_sequences DROP CONSTRAINT webhook_customer_sequences_seq_ck,
                     ADD CONSTRAINT webhook_customer_sequences_seq_ck CHECK (last_sequence >= 1)`);
    await q.query(`ALTER TABLE webhook_customer_sequences DROP COLUMN IF EXISTS previous_xact, DROP COLUMN IF EXISTS last_xact`);
  }
}

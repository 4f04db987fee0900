import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The set of active entitlements the customer's last numbered update announced (one entry per
 * key), and the set announced before the statement that last took the counter: under the
 * counter's lock a change compares what it read as "before" with what receivers last heard,
 * and announces its `changes` against the latter. Empty where unknown (counters written before
 * these columns, or taken only without a number): the change's own state before is used then.
 */
export class WebhooksAnnouncedSets1790000003400 implements MigrationInterface {
  name = 'WebhooksAnnouncedSets1790000003400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_customer_sequences ADD COLUMN announced text, ADD COLUMN previous_announced text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_customer_sequences DROP COLUMN IF EXISTS previous_announced, DROP COLUMN IF EXISTS announced`);
  }
}

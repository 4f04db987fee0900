import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Money that went back to customers, on every rail: `revenue_refunds` keeps each refund,
 * chargeback and chargeback reversal once (by the rail's fact id), and `revenue_cash_monthly`
 * gains `refunds_minor`, the month's refunds and chargebacks less reversals, so net cash stays
 * a point read. Additive: the existing rows and columns keep their meaning.
 */
export class RevenueRefunds1790000003650 implements MigrationInterface {
  name = 'RevenueRefunds1790000003650';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE revenue_refunds (
        project_id      text        NOT NULL,
        env             text        NOT NULL CHECK (env IN ('sandbox', 'production')),
        rail            text        NOT NULL CHECK (rail IN ('ios_store', 'card_payments', 'android_store')),
        fact_id         text        NOT NULL CHECK (char_length(fact_id) BETWEEN 1 AND 600),
        kind            text        NOT NULL CHECK (kind IN ('refund', 'chargeback', 'reversal')),
        transaction_id  text        NULL CHECK (char_length(transaction_id) BETWEEN 1 AND 512),
        subscription_id text        NULL CHECK (char_length(subscription_id) BETWEEN 1 AND 512),
        customer_id     text        NOT NULL,
        currency        text        NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
        amount_minor    numeric     NOT NULL CHECK (amount_minor > 0),
        occurred_at     timestamptz NOT NULL,
        CONSTRAINT revenue_refunds_pk PRIMARY KEY (project_id, env, rail, fact_id),
        CONSTRAINT revenue_refunds_customer_fk FOREIGN KEY (project_id, env, customer_id) REFERENCES customers (project_id, env, id)
      )`);
    await q.query(`CREATE INDEX revenue_refunds_day_idx ON revenue_refunds (project_id, env, occurred_at)`);
    await q.query(`ALTER TABLE revenue_cash_monthly ADD COLUMN refunds_minor numeric NOT NULL DEFAULT 0`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE revenue_cash_monthly DROP COLUMN IF EXISTS refunds_minor`);
    await q.query(`DROP TABLE IF EXISTS revenue_refunds`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Voided Android purchases.
 *
 * `android_voided_purchases`: one row per voided purchase token of a project, written by a
 * `VOIDED_PURCHASE` or `SUBSCRIPTION_REVOKED` notification (`voided_source` `notification`) or
 * an entry of `purchases.voidedpurchases.list` (`list`). A token with a row never gives access
 * again, whatever a later read of subscriptionsv2 says. Keyed like `rail_notifications`, per
 * project and token: the environment is learned only from a read or a stored record (`env`,
 * null while unknown). The first report wins (`voided_at`, `order_id`, `voided_reason`).
 */
export class AndroidVoidedPurchases1790000003617 implements MigrationInterface {
  name = 'AndroidVoidedPurchases1790000003617';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE android_voided_purchases (
        project_id     text        NOT NULL REFERENCES projects (id),
        purchase_token text        NOT NULL CONSTRAINT android_voided_purchases_token_ck CHECK (char_length(purchase_token) BETWEEN 1 AND 512),
        env            text        NULL CONSTRAINT android_voided_purchases_env_ck CHECK (env IN ('sandbox', 'production')),
        voided_at      timestamptz NOT NULL,
        order_id       text        NULL CONSTRAINT android_voided_purchases_order_ck CHECK (char_length(order_id) BETWEEN 1 AND 512),
        voided_reason  integer     NULL CONSTRAINT android_voided_purchases_reason_ck CHECK (voided_reason BETWEEN 0 AND 1000),
        voided_source  text        NOT NULL CONSTRAINT android_voided_purchases_source_ck CHECK (voided_source IN ('notification', 'list')),
        recorded_at    timestamptz NOT NULL,
        CONSTRAINT android_voided_purchases_pk PRIMARY KEY (project_id, purchase_token)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS android_voided_purchases`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `subscription_history`: one row per lifecycle event of a subscription (`subscription.*`,
 * `purchase.completed`), written by the rail applier with the upsert of the subscription
 * record (same statement, same transaction), whether or not the project has webhook
 * endpoints. The customer history read pages through it newest first on (occurred_at_ms,
 * seq), served by subscription_history_customer_idx. A merge or fold moves the rows to the
 * surviving customer. The customer key is the composite tenant key, as on rail_subscriptions.
 */
export class SubscriptionHistory1790000003740 implements MigrationInterface {
  name = 'SubscriptionHistory1790000003740';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE subscription_history (
        project_id      text        NOT NULL,
        env             text        NOT NULL CONSTRAINT subscription_history_env_ck CHECK (env IN ('sandbox', 'production')),
        id              text        NOT NULL CONSTRAINT subscription_history_id_ck CHECK (id ~ '^hist_[a-z0-9]{24}$'),
        seq             bigint      GENERATED ALWAYS AS IDENTITY,
        customer_id     text        NOT NULL,
        type            text        NOT NULL CONSTRAINT subscription_history_type_ck CHECK (type ~ '^(subscription|purchase)\\.[a-z_]{1,60}$'),
        occurred_at_ms  bigint      NOT NULL CONSTRAINT subscription_history_occurred_ck CHECK (occurred_at_ms >= 0),
        rail            text        NOT NULL CONSTRAINT subscription_history_rail_ck CHECK (rail IN ('ios_store', 'card_payments', 'android_store')),
        subscription_id text        NOT NULL CONSTRAINT subscription_history_subscription_ck CHECK (char_length(subscription_id) BETWEEN 1 AND 512),
        product_id      text        NOT NULL CONSTRAINT subscription_history_product_ck CHECK (char_length(product_id) BETWEEN 1 AND 200),
        audit_event_id  text        NOT NULL CONSTRAINT subscription_history_audit_ck CHECK (char_length(audit_event_id) BETWEEN 1 AND 128),
        rail_event_id   text        NULL CONSTRAINT subscription_history_rail_event_ck CHECK (char_length(rail_event_id) BETWEEN 1 AND 512),
        details         jsonb       NOT NULL CONSTRAINT subscription_history_details_ck CHECK (jsonb_typeof(details) = 'object'),
        recorded_at     timestamptz NOT NULL,
        CONSTRAINT subscription_history_pk PRIMARY KEY (project_id, env, id),
        CONSTRAINT subscription_history_customer_fk FOREIGN KEY (project_id, env, customer_id) REFERENCES customers (project_id, env, id)
      )`);
    await q.query(`CREATE INDEX subscription_history_customer_idx ON subscription_history (project_id, env, customer_id, occurred_at_ms DESC, seq DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS subscription_history`);
  }
}

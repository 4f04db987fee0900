import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The rail model every purchase rail shares (iOS store, card payments, Android store):
 *
 * - `rail_settings`: the operator's non-secret settings of a rail, per project (the operator API
 *   configures rails per project, not per environment). `version` counts changes, so caches
 *   (the iOS verifiers) key on it. Secrets never land here (they live in the RAIL_SECRETS_FILE file).
 * - `rail_subscriptions`: one row per (project, env, rail, subscription id) holding the rail's
 *   latest state; `rail_time_ms` is the "newest rail time wins" clock.
 * - `rail_transactions`: iOS transaction ids (and any rail's per-purchase id) already applied:
 *   re-sends are recognised by the primary key.
 * - `rail_notifications`: notifications already processed, with the first answer.
 *
 * Customer references are composite foreign keys to customers (project_id, env, id), backed by
 * identity's unique index customers_scope_id_uq (PostgreSQL accepts a plain unique index as
 * the referenced key), so a rail record can never point at another tenant's customer.
 * Rail records are financial records: erasure keeps them (customers rows are never deleted).
 */
export class RailsSchema1790000000600 implements MigrationInterface {
  name = 'RailsSchema1790000000600';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE rail_settings (
        project_id text        NOT NULL REFERENCES projects (id),
        rail       text        NOT NULL CONSTRAINT rail_settings_rail_ck CHECK (rail IN ('ios_store', 'card_payments', 'android_store')),
        settings   jsonb       NOT NULL DEFAULT '{}'::jsonb CONSTRAINT rail_settings_settings_ck CHECK (jsonb_typeof(settings) = 'object'),
        enabled    boolean     NOT NULL DEFAULT true,
        version    integer     NOT NULL DEFAULT 1 CONSTRAINT rail_settings_version_ck CHECK (version >= 1),
        updated_at timestamptz NOT NULL,
        CONSTRAINT rail_settings_pk PRIMARY KEY (project_id, rail)
      )`);

    await q.query(`
      CREATE TABLE rail_subscriptions (
        project_id      text        NOT NULL,
        env             text        NOT NULL CONSTRAINT rail_subscriptions_env_ck CHECK (env IN ('sandbox', 'production')),
        rail            text        NOT NULL CONSTRAINT rail_subscriptions_rail_ck CHECK (rail IN ('ios_store', 'card_payments', 'android_store')),
        subscription_id text        NOT NULL CONSTRAINT rail_subscriptions_subscription_ck CHECK (char_length(subscription_id) BETWEEN 1 AND 512),
        customer_id     text        NOT NULL,
        product_id      text        NOT NULL CONSTRAINT rail_subscriptions_product_ck CHECK (char_length(product_id) BETWEEN 1 AND 200),
        state           text        NOT NULL CONSTRAINT rail_subscriptions_state_ck CHECK (state IN ('active', 'inactive')),
        valid_until     timestamptz NULL,
        rail_time_ms    bigint      NOT NULL,
        raw_status      text        NULL,
        last_event_id   text        NULL,
        created_at      timestamptz NOT NULL,
        updated_at      timestamptz NOT NULL,
        CONSTRAINT rail_subscriptions_pk PRIMARY KEY (project_id, env, rail, subscription_id),
        CONSTRAINT rail_subscriptions_customer_fk FOREIGN KEY (project_id, env, customer_id) REFERENCES customers (project_id, env, id)
      )`);
    await q.query(`CREATE INDEX rail_subscriptions_customer_idx ON rail_subscriptions (project_id, env, customer_id, rail)`);

    await q.query(`
      CREATE TABLE rail_transactions (
        project_id      text        NOT NULL,
        env             text        NOT NULL CONSTRAINT rail_transactions_env_ck CHECK (env IN ('sandbox', 'production')),
        rail            text        NOT NULL CONSTRAINT rail_transactions_rail_ck CHECK (rail IN ('ios_store', 'card_payments', 'android_store')),
        transaction_id  text        NOT NULL CONSTRAINT rail_transactions_transaction_ck CHECK (char_length(transaction_id) BETWEEN 1 AND 512),
        subscription_id text        NOT NULL,
        customer_id     text        NOT NULL,
        decision        text        NOT NULL CONSTRAINT rail_transactions_decision_ck CHECK (decision IN ('applied', 'no_op', 'rejected')),
        audit_event_id  text        NULL,
        created_at      timestamptz NOT NULL,
        CONSTRAINT rail_transactions_pk PRIMARY KEY (project_id, env, rail, transaction_id),
        CONSTRAINT rail_transactions_customer_fk FOREIGN KEY (project_id, env, customer_id) REFERENCES customers (project_id, env, id)
      )`);

    // A rail's notification id is unique on the rail, whatever environment the notification
    // lands in (Android learns the environment only after reading the purchase), so the
    // de-duplication key is (project, rail, id); env is recorded with the answer.
    await q.query(`
      CREATE TABLE rail_notifications (
        project_id      text        NOT NULL REFERENCES projects (id),
        rail            text        NOT NULL CONSTRAINT rail_notifications_rail_ck CHECK (rail IN ('ios_store', 'card_payments', 'android_store')),
        notification_id text        NOT NULL CONSTRAINT rail_notifications_id_ck CHECK (char_length(notification_id) BETWEEN 1 AND 512),
        env             text        NOT NULL CONSTRAINT rail_notifications_env_ck CHECK (env IN ('sandbox', 'production')),
        event_type      text        NOT NULL,
        decision        text        NOT NULL CONSTRAINT rail_notifications_decision_ck CHECK (decision IN ('applied', 'no_op', 'rejected')),
        customer_id     text        NULL,
        audit_event_id  text        NULL,
        received_at     timestamptz NOT NULL,
        processed_at    timestamptz NOT NULL,
        CONSTRAINT rail_notifications_pk PRIMARY KEY (project_id, rail, notification_id)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS rail_notifications`);
    await q.query(`DROP TABLE IF EXISTS rail_transactions`);
    await q.query(`DROP TABLE IF EXISTS rail_subscriptions`);
    await q.query(`DROP TABLE IF EXISTS rail_settings`);
  }
}

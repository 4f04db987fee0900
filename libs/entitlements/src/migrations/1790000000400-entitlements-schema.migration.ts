import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Entitlement state of every rail in one table, the project's entitlement-key registry and
 * the product catalogue. Registry and catalogue are per project (the operator API: a project's
 * catalogue, not an environment's), so they carry no env column.
 */
export class EntitlementsSchema1790000000400 implements MigrationInterface {
  name = 'EntitlementsSchema1790000000400';

  async up(q: QueryRunner): Promise<void> {
    // One row per (customer, key, rail): a rail writes its current view of the key; a read
    // returns the active rows collapsed to one per key. `version` counts every change of the
    // row (the audit entries of manual changes carry it), `last_event_id` is the audit entry
    // of the latest manual change.
    await q.query(`
      CREATE TABLE entitlements (
        id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        project_id      text        NOT NULL REFERENCES projects(id),
        env             text        NOT NULL CONSTRAINT entitlements_env_ck CHECK (env IN ('sandbox', 'production')),
        customer_id     text        NOT NULL CONSTRAINT entitlements_customer_ck CHECK (starts_with(customer_id, 'cdcust_')),
        entitlement_key text        NOT NULL CONSTRAINT entitlements_key_ck CHECK (char_length(entitlement_key) BETWEEN 1 AND 64),
        rail            text        NOT NULL CONSTRAINT entitlements_rail_ck CHECK (rail IN ('ios_store', 'card_payments', 'android_store', 'manual')),
        product_id      text        NOT NULL,
        subscription_id text        NOT NULL,
        state           text        NOT NULL CONSTRAINT entitlements_state_ck CHECK (state IN ('active', 'revoked', 'expired')),
        valid_until     timestamptz NULL,
        version         integer     NOT NULL DEFAULT 1 CONSTRAINT entitlements_version_ck CHECK (version >= 1),
        last_event_id   text        NULL,
        created_at      timestamptz NOT NULL,
        updated_at      timestamptz NOT NULL,
        CONSTRAINT entitlements_customer_key_rail_uq UNIQUE (project_id, env, customer_id, entitlement_key, rail)
      )`);
    await q.query(`
      CREATE TABLE entitlement_keys (
        project_id    text        NOT NULL REFERENCES projects(id),
        key           text        NOT NULL CONSTRAINT entitlement_keys_key_ck CHECK (char_length(key) BETWEEN 1 AND 64),
        registered_by text        NOT NULL CONSTRAINT entitlement_keys_by_ck CHECK (registered_by IN ('grant', 'migration', 'catalog')),
        created_at    timestamptz NOT NULL,
        PRIMARY KEY (project_id, key)
      )`);
    await q.query(`CREATE INDEX entitlement_keys_listing_idx ON entitlement_keys (project_id, created_at, key)`);
    await q.query(`
      CREATE TABLE catalog_products (
        project_id       text        NOT NULL REFERENCES projects(id),
        rail             text        NOT NULL CONSTRAINT catalog_products_rail_ck CHECK (rail IN ('ios_store', 'card_payments', 'android_store')),
        product_id       text        NOT NULL CONSTRAINT catalog_products_product_ck CHECK (char_length(product_id) BETWEEN 1 AND 200),
        entitlement_keys text[]      NOT NULL DEFAULT '{}',
        position         integer     NOT NULL,
        updated_at       timestamptz NOT NULL,
        PRIMARY KEY (project_id, rail, product_id)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS catalog_products`);
    await q.query(`DROP TABLE IF EXISTS entitlement_keys`);
    await q.query(`DROP TABLE IF EXISTS entitlements`);
  }
}

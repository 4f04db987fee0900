import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Customers, the alias graph, merge reviews, erasures and the per-project identity provider.
 * Every tenant table carries (project_id, env); every index starts with them, except the
 * erasure worker's partial index (a cross-tenant queue scan, never a tenant read).
 */
export class CreateIdentity1790000000300 implements MigrationInterface {
  name = 'CreateIdentity1790000000300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE customers (
        id           text        PRIMARY KEY CONSTRAINT customers_id_ck CHECK (id LIKE 'cdcust\\_%'),
        project_id   text        NOT NULL,
        env          text        NOT NULL CONSTRAINT customers_env_ck CHECK (env IN ('sandbox', 'production')),
        email        text        NULL,
        first_name   text        NULL,
        traits       jsonb       NOT NULL DEFAULT '{}'::jsonb CONSTRAINT customers_traits_ck CHECK (jsonb_typeof(traits) = 'object'),
        forgotten_at timestamptz NULL,
        created_at   timestamptz NOT NULL,
        updated_at   timestamptz NOT NULL
      )`);
    await q.query(`CREATE UNIQUE INDEX customers_scope_id_uq ON customers (project_id, env, id)`);

    // The alias graph: typed nodes (developer, anonymous, rail customer ids) -> one customer.
    // assurance: 'verified' when the link was made with a verified idToken, else 'self_asserted'.
    await q.query(`
      CREATE TABLE customer_aliases (
        project_id  text        NOT NULL,
        env         text        NOT NULL CONSTRAINT customer_aliases_env_ck CHECK (env IN ('sandbox', 'production')),
        type        text        NOT NULL CONSTRAINT customer_aliases_type_ck CHECK (type ~ '^[a-z][a-z0-9_]{1,39}$'),
        value       text        NOT NULL CONSTRAINT customer_aliases_value_ck CHECK (char_length(value) BETWEEN 1 AND 512),
        customer_id text        NOT NULL REFERENCES customers (id),
        assurance   text        NOT NULL DEFAULT 'self_asserted' CONSTRAINT customer_aliases_assurance_ck CHECK (assurance IN ('verified', 'self_asserted')),
        verified_at timestamptz NULL,
        created_at  timestamptz NOT NULL,
        CONSTRAINT customer_aliases_pk PRIMARY KEY (project_id, env, type, value)
      )`);
    await q.query(`CREATE INDEX customer_aliases_customer_idx ON customer_aliases (project_id, env, customer_id, type)`);

    await q.query(`
      CREATE TABLE merge_reviews (
        id                    text        PRIMARY KEY,
        project_id            text        NOT NULL,
        env                   text        NOT NULL CONSTRAINT merge_reviews_env_ck CHECK (env IN ('sandbox', 'production')),
        developer_user_id     text        NULL,
        anonymous_id          text        NULL,
        canonical_customer_id text        NOT NULL REFERENCES customers (id),
        other_customer_id     text        NOT NULL REFERENCES customers (id),
        status                text        NOT NULL DEFAULT 'pending' CONSTRAINT merge_reviews_status_ck CHECK (status IN ('pending')),
        created_at            timestamptz NOT NULL,
        CONSTRAINT merge_reviews_distinct_ck CHECK (canonical_customer_id <> other_customer_id)
      )`);
    // One review per pair of customers, whichever side the conflict came from.
    await q.query(`
      CREATE UNIQUE INDEX merge_reviews_pair_uq ON merge_reviews
        (project_id, env, LEAST(canonical_customer_id, other_customer_id), GREATEST(canonical_customer_id, other_customer_id))`);
    await q.query(`CREATE INDEX merge_reviews_list_idx ON merge_reviews (project_id, env, created_at DESC)`);

    // subject: the personal identifiers snapshotted at forget time for the erasure hooks;
    // cleared when the worker has erased them.
    await q.query(`
      CREATE TABLE erasures (
        project_id  text        NOT NULL,
        env         text        NOT NULL CONSTRAINT erasures_env_ck CHECK (env IN ('sandbox', 'production')),
        customer_id text        NOT NULL REFERENCES customers (id),
        status      text        NOT NULL DEFAULT 'queued' CONSTRAINT erasures_status_ck CHECK (status IN ('queued', 'deleted')),
        subject     jsonb       NULL,
        request_id  text        NULL,
        attempts    integer     NOT NULL DEFAULT 0,
        last_error  text        NULL,
        queued_at   timestamptz NOT NULL,
        deleted_at  timestamptz NULL,
        CONSTRAINT erasures_pk PRIMARY KEY (project_id, env, customer_id)
      )`);
    await q.query(`CREATE INDEX erasures_list_idx ON erasures (project_id, env, queued_at DESC)`);
    await q.query(`CREATE INDEX erasures_queue_idx ON erasures (queued_at) WHERE status = 'queued'`);

    // Project-level setting of the operator API (not per environment).
    await q.query(`
      CREATE TABLE identity_providers (
        project_id text        PRIMARY KEY REFERENCES projects (id),
        issuer     text        NOT NULL,
        audience   text        NOT NULL,
        jwks       jsonb       NULL,
        jwks_uri   text        NULL,
        updated_at timestamptz NOT NULL,
        CONSTRAINT identity_providers_source_ck CHECK ((jwks IS NULL) <> (jwks_uri IS NULL))
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS identity_providers`);
    await q.query(`DROP TABLE IF EXISTS erasures`);
    await q.query(`DROP TABLE IF EXISTS merge_reviews`);
    await q.query(`DROP TABLE IF EXISTS customer_aliases`);
    await q.query(`DROP TABLE IF EXISTS customers`);
  }
}

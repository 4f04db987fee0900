import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Outbound webhooks: the app's endpoints, the transactional outbox of events, one delivery
 * per (event, endpoint) and the per-customer sequence of entitlement updates. Secrets are
 * never stored: an endpoint keeps only the version its secret is derived from.
 */
export class WebhooksSchema1790000000980 implements MigrationInterface {
  name = 'WebhooksSchema1790000000980';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhook_endpoints (
        id                          text    PRIMARY KEY CONSTRAINT webhook_endpoints_id_ck CHECK (starts_with(id, 'we_')),
        project_id                  text    NOT NULL REFERENCES projects(id),
        env                         text    NOT NULL CONSTRAINT webhook_endpoints_env_ck CHECK (env IN ('sandbox', 'production')),
        url                         text    NOT NULL CONSTRAINT webhook_endpoints_url_ck CHECK (char_length(url) BETWEEN 1 AND 2048),
        event_types                 text[]  NOT NULL DEFAULT '{*}',
        description                 text    NULL CONSTRAINT webhook_endpoints_description_ck CHECK (char_length(description) <= 500),
        status                      text    NOT NULL CONSTRAINT webhook_endpoints_status_ck CHECK (status IN ('enabled', 'disabled', 'disabled_failing')),
        secret_version              integer NOT NULL DEFAULT 1 CONSTRAINT webhook_endpoints_secret_version_ck CHECK (secret_version >= 1),
        previous_secret_expires_ms  bigint  NULL,
        failing_since_ms            bigint  NULL,
        created_at_ms               bigint  NOT NULL,
        updated_at_ms               bigint  NOT NULL
      )`);
    await q.query(`CREATE INDEX webhook_endpoints_scope_idx ON webhook_endpoints (project_id, env, created_at_ms)`);
    await q.query(`
      CREATE TABLE webhook_events (
        id             text   PRIMARY KEY CONSTRAINT webhook_events_id_ck CHECK (starts_with(id, 'evt_')),
        project_id     text   NOT NULL REFERENCES projects(id),
        env            text   NOT NULL CONSTRAINT webhook_events_env_ck CHECK (env IN ('sandbox', 'production')),
        customer_id    text   NULL,
        type           text   NOT NULL CONSTRAINT webhook_events_type_ck CHECK (type IN (
                         'customer.entitlements.updated', 'subscription.started', 'subscription.renewed', 'subscription.canceled',
                         'subscription.uncanceled', 'subscription.billing_issue', 'subscription.expired', 'subscription.refunded',
                         'subscription.product_changed', 'entitlement.granted_manually', 'entitlement.revoked_manually',
                         'customer.erased', 'test')),
        body           text   NULL,
        created_at_ms  bigint NOT NULL
      )`);
    await q.query(`CREATE INDEX webhook_events_customer_idx ON webhook_events (project_id, env, customer_id) WHERE customer_id IS NOT NULL`);
    await q.query(`
      CREATE TABLE webhook_deliveries (
        id                  text    PRIMARY KEY CONSTRAINT webhook_deliveries_id_ck CHECK (starts_with(id, 'wd_')),
        project_id          text    NOT NULL REFERENCES projects(id),
        env                 text    NOT NULL CONSTRAINT webhook_deliveries_env_ck CHECK (env IN ('sandbox', 'production')),
        endpoint_id         text    NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
        event_id            text    NOT NULL REFERENCES webhook_events(id) ON DELETE CASCADE,
        event_type          text    NOT NULL,
        status              text    NOT NULL CONSTRAINT webhook_deliveries_status_ck CHECK (status IN ('pending', 'succeeded', 'failed', 'dead')),
        attempts            integer NOT NULL DEFAULT 0 CONSTRAINT webhook_deliveries_attempts_ck CHECK (attempts >= 0),
        next_attempt_at_ms  bigint  NULL,
        last_status_code    integer NULL,
        last_error          text    NULL CONSTRAINT webhook_deliveries_error_ck CHECK (char_length(last_error) <= 500),
        leased_until_ms     bigint  NULL,
        leased_by           text    NULL,
        created_at_ms       bigint  NOT NULL,
        succeeded_at_ms     bigint  NULL,
        CONSTRAINT webhook_deliveries_event_endpoint_uq UNIQUE (event_id, endpoint_id),
        CONSTRAINT webhook_deliveries_next_ck CHECK ((status IN ('pending', 'failed')) = (next_attempt_at_ms IS NOT NULL))
      )`);
    await q.query(`CREATE INDEX webhook_deliveries_listing_idx ON webhook_deliveries (project_id, env, endpoint_id, created_at_ms DESC, id DESC)`);
    // The dispatcher drains due deliveries across tenants (like the jobs queue): by due time.
    await q.query(`CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (endpoint_id, next_attempt_at_ms) WHERE status IN ('pending', 'failed')`);
    await q.query(`
      CREATE TABLE webhook_customer_sequences (
        project_id     text   NOT NULL REFERENCES projects(id),
        env            text   NOT NULL CONSTRAINT webhook_customer_sequences_env_ck CHECK (env IN ('sandbox', 'production')),
        customer_id    text   NOT NULL,
        last_sequence  bigint NOT NULL CONSTRAINT webhook_customer_sequences_seq_ck CHECK (last_sequence >= 1),
        PRIMARY KEY (project_id, env, customer_id)
      )`);
    // The expiry scan reads active rows by their end across tenants.
    await q.query(`CREATE INDEX entitlements_active_until_idx ON entitlements (valid_until) WHERE state = 'active' AND valid_until IS NOT NULL`);
    // Up to where (service clock, ms) the expiry scan has reported entitlements whose validUntil passed.
    await q.query(`
      CREATE TABLE webhook_expiry_watermark (
        id            smallint PRIMARY KEY CONSTRAINT webhook_expiry_watermark_one_ck CHECK (id = 1),
        scanned_to_ms bigint   NOT NULL
      )`);
    await q.query(`INSERT INTO webhook_expiry_watermark (id, scanned_to_ms) VALUES (1, (extract(epoch FROM now()) * 1000)::bigint)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS webhook_expiry_watermark`);
    await q.query(`DROP INDEX IF EXISTS entitlements_active_until_idx`);
    await q.query(`DROP TABLE IF EXISTS webhook_customer_sequences`);
    await q.query(`DROP TABLE IF EXISTS webhook_deliveries`);
    await q.query(`DROP TABLE IF EXISTS webhook_events`);
    await q.query(`DROP TABLE IF EXISTS webhook_endpoints`);
  }
}

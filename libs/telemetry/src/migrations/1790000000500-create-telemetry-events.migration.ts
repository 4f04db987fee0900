import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Telemetry storage.
 *
 * `events` is RANGE-partitioned by `client_day`: the UTC day of the timestamp the client
 * sent (the receive day when it sent none). That value is identical on every delivery of
 * the same event, so the de-duplication key `(project_id, env, event_id, client_day)`, which
 * must contain the partition key, still makes a retry overwrite itself. The maintenance job
 * creates daily partitions ahead and drops those past retention; the DEFAULT partition
 * holds what falls outside them (clients with clocks far off) and is purged by receive time.
 *
 * Indexes are deliberately few (each one costs on every insert) and all start with
 * (project_id, env). `error_issues` groups error events by their client fingerprint;
 * `event_identity_hints` is the identity resolver's queue (one row per distinct hint set).
 */
export class CreateTelemetryEvents1790000000500 implements MigrationInterface {
  name = 'CreateTelemetryEvents1790000000500';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE events (
        project_id          text     NOT NULL,
        env                 text     NOT NULL CONSTRAINT events_env_ck CHECK (env IN ('sandbox', 'production')),
        event_id            text     NOT NULL,
        client_day          date     NOT NULL,
        app_id              text     NOT NULL,
        name                text     NOT NULL,
        timestamp_ms        bigint   NOT NULL,
        client_timestamp_ms bigint   NULL,
        received_at_ms      bigint   NOT NULL,
        level               text     NULL CONSTRAINT events_level_ck CHECK (level IN ('error', 'warning', 'info')),
        fingerprint         text     NULL CONSTRAINT events_fingerprint_ck CHECK (fingerprint ~ '^[0-9a-f]{8}$'),
        properties          jsonb    NOT NULL DEFAULT '{}'::jsonb,
        tags                jsonb    NULL,
        category_tags       jsonb    NULL,
        developer_user_id   text     NULL,
        anonymous_id        text     NULL,
        service_customer_id text     NULL,
        customer_id         text     NULL,
        sdk_name            text     NULL,
        sdk_version         text     NULL,
        deliveries          smallint NOT NULL DEFAULT 1,
        CONSTRAINT events_pk PRIMARY KEY (project_id, env, event_id, client_day)
      ) PARTITION BY RANGE (client_day)`);
    await q.query(`CREATE TABLE events_default PARTITION OF events DEFAULT`);
    // Error events by issue.
    await q.query(`CREATE INDEX events_fingerprint_idx ON events (project_id, env, fingerprint, timestamp_ms) WHERE fingerprint IS NOT NULL`);
    // Per-customer reads and erasure of resolved events.
    await q.query(`CREATE INDEX events_customer_idx ON events (project_id, env, customer_id) WHERE customer_id IS NOT NULL`);
    // Events still waiting for their customer, by hint: the resolver fills them in, erasure
    // finds the unresolved ones. Resolved rows leave these indexes.
    await q.query(
      `CREATE INDEX events_unresolved_anonymous_idx ON events (project_id, env, anonymous_id) WHERE customer_id IS NULL AND anonymous_id IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX events_unresolved_user_idx ON events (project_id, env, developer_user_id) WHERE customer_id IS NULL AND developer_user_id IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX events_unresolved_service_customer_idx ON events (project_id, env, service_customer_id) WHERE customer_id IS NULL AND service_customer_id IS NOT NULL`,
    );
    // Initial daily partitions (the maintenance job keeps creating them ahead).
    await q.query(`
      DO $$
      DECLARE d date;
      BEGIN
        FOR i IN -7..7 LOOP
          d := (now() AT TIME ZONE 'UTC')::date + i;
          EXECUTE format('CREATE TABLE IF NOT EXISTS %I PARTITION OF events FOR VALUES FROM (%L) TO (%L)',
                         'events_p' || to_char(d, 'YYYYMMDD'), d, d + 1);
        END LOOP;
      END
      $$`);

    await q.query(`
      CREATE TABLE error_issues (
        project_id      text   NOT NULL,
        env             text   NOT NULL CONSTRAINT error_issues_env_ck CHECK (env IN ('sandbox', 'production')),
        fingerprint     text   NOT NULL CONSTRAINT error_issues_fingerprint_ck CHECK (fingerprint ~ '^[0-9a-f]{8}$'),
        event_count     bigint NOT NULL CONSTRAINT error_issues_count_ck CHECK (event_count >= 0),
        first_seen_ms   bigint NOT NULL,
        last_seen_ms    bigint NOT NULL,
        last_event_name text   NOT NULL,
        last_level      text   NULL,
        created_at_ms   bigint NOT NULL,
        updated_at_ms   bigint NOT NULL,
        CONSTRAINT error_issues_pk PRIMARY KEY (project_id, env, fingerprint)
      )`);
    await q.query(`CREATE INDEX error_issues_last_seen_idx ON error_issues (project_id, env, last_seen_ms DESC)`);

    // The identity resolver's queue: one row per distinct set of hints (a device, a user),
    // not per event. Ingestion upserts the few distinct sets of a batch in the same
    // statement; the resolver asks the identity directory once per set and fills in the
    // customer of that set's unresolved events. A miss is retried with back-off and costs
    // no event writes.
    await q.query(`
      CREATE TABLE event_identity_hints (
        id                  bigint   GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        project_id          text     NOT NULL,
        env                 text     NOT NULL CONSTRAINT event_identity_hints_env_ck CHECK (env IN ('sandbox', 'production')),
        developer_user_id   text     NULL,
        anonymous_id        text     NULL,
        service_customer_id text     NULL,
        pending             boolean  NOT NULL DEFAULT true,
        attempts            smallint NOT NULL DEFAULT 0,
        resolve_after_ms    bigint   NOT NULL DEFAULT 0,
        customer_id         text     NULL,
        first_seen_ms       bigint   NOT NULL,
        last_seen_ms        bigint   NOT NULL,
        resolved_at_ms      bigint   NULL,
        CONSTRAINT event_identity_hints_some_ck CHECK (developer_user_id IS NOT NULL OR anonymous_id IS NOT NULL OR service_customer_id IS NOT NULL),
        CONSTRAINT event_identity_hints_uq UNIQUE NULLS NOT DISTINCT (project_id, env, developer_user_id, anonymous_id, service_customer_id)
      )`);
    // Deliberate exception to "every index starts with (project_id, env)": the resolver's
    // queue is drained across tenants by due time, never read per tenant.
    await q.query(`CREATE INDEX event_identity_hints_due_idx ON event_identity_hints (resolve_after_ms) WHERE pending`);
    await q.query(`CREATE INDEX event_identity_hints_anonymous_idx ON event_identity_hints (project_id, env, anonymous_id) WHERE anonymous_id IS NOT NULL`);
    await q.query(
      `CREATE INDEX event_identity_hints_service_customer_idx ON event_identity_hints (project_id, env, service_customer_id) WHERE service_customer_id IS NOT NULL`,
    );
    await q.query(`CREATE INDEX event_identity_hints_customer_idx ON event_identity_hints (project_id, env, customer_id) WHERE customer_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS event_identity_hints`);
    await q.query(`DROP TABLE IF EXISTS error_issues`);
    await q.query(`DROP TABLE IF EXISTS events CASCADE`);
  }
}

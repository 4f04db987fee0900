import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Platform tables: stored answers of idempotent requests and the durable jobs queue.
 * Neither references a context's table: the platform knows no context.
 */
export class PlatformPrimitives1790000000900 implements MigrationInterface {
  name = 'PlatformPrimitives1790000000900';

  async up(q: QueryRunner): Promise<void> {
    // One row per (tenant, endpoint, key). status_code NULL: claimed by a request still running
    // (its transaction holds the row; a concurrent duplicate waits on the unique key).
    await q.query(`
      CREATE TABLE idempotency_keys (
        project_id      text   NOT NULL,
        env             text   NOT NULL CONSTRAINT idempotency_keys_env_ck CHECK (env IN ('sandbox', 'production')),
        endpoint        text   NOT NULL,
        idempotency_key text   NOT NULL CONSTRAINT idempotency_keys_key_ck CHECK (char_length(idempotency_key) BETWEEN 1 AND 255),
        body_hash       text   NOT NULL,
        status_code     integer NULL,
        response        json   NULL, -- json, not jsonb: a replay is the first answer as it was, key order included
        created_at_ms   bigint NOT NULL,
        expires_at_ms   bigint NOT NULL,
        CONSTRAINT idempotency_keys_pk PRIMARY KEY (project_id, env, endpoint, idempotency_key)
      )`);
    // Deliberate exception to "indexes start with (project_id, env)": the purge is a cross-tenant scan by age.
    await q.query(`CREATE INDEX idempotency_keys_expiry_idx ON idempotency_keys (expires_at_ms)`);

    await q.query(`
      CREATE TABLE jobs (
        id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        type          text     NOT NULL CONSTRAINT jobs_type_ck CHECK (type ~ '^[a-z][a-z0-9_.]{1,99}$'),
        project_id    text     NULL,
        env           text     NULL CONSTRAINT jobs_env_ck CHECK (env IN ('sandbox', 'production')),
        payload       jsonb    NOT NULL DEFAULT '{}'::jsonb,
        dedupe_key    text     NULL,
        status        text     NOT NULL DEFAULT 'queued' CONSTRAINT jobs_status_ck CHECK (status IN ('queued', 'running', 'done', 'dead')),
        attempts      integer  NOT NULL DEFAULT 0,
        max_attempts  integer  NOT NULL CONSTRAINT jobs_max_attempts_ck CHECK (max_attempts >= 1),
        run_at_ms     bigint   NOT NULL,
        leased_until_ms bigint NULL,
        leased_by     text     NULL,
        last_error    text     NULL,
        created_at_ms bigint   NOT NULL,
        updated_at_ms bigint   NOT NULL,
        finished_at_ms bigint  NULL,
        CONSTRAINT jobs_tenant_ck CHECK ((project_id IS NULL) = (env IS NULL))
      )`);
    // One live job per (type, dedupe key): enqueueing the same work twice is a no-op.
    await q.query(`CREATE UNIQUE INDEX jobs_dedupe_uq ON jobs (type, dedupe_key) WHERE dedupe_key IS NOT NULL AND status IN ('queued', 'running')`);
    // The worker's claim scan (cross-tenant by design, like every queue).
    await q.query(`CREATE INDEX jobs_due_idx ON jobs (run_at_ms) WHERE status = 'queued'`);
    await q.query(`CREATE INDEX jobs_leased_idx ON jobs (leased_until_ms) WHERE status = 'running'`);
    await q.query(`CREATE INDEX jobs_dead_idx ON jobs (updated_at_ms DESC) WHERE status = 'dead'`);
    await q.query(`CREATE INDEX jobs_finished_idx ON jobs (finished_at_ms) WHERE status = 'done'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS jobs`);
    await q.query(`DROP TABLE IF EXISTS idempotency_keys`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The audit journal. Append-only in the database itself: a trigger refuses UPDATE, DELETE
 * and TRUNCATE unless the transaction set `audit.retention_purge` to 'on' (SET LOCAL), which
 * only the 24-month retention purge does, and even then only DELETE passes.
 */
export class CreateAuditEntries1790000000200 implements MigrationInterface {
  name = 'CreateAuditEntries1790000000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE audit_entries (
        id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        project_id  text        NOT NULL,
        env         text        NOT NULL CONSTRAINT audit_entries_env_ck CHECK (env IN ('sandbox', 'production')),
        event_id    text        NOT NULL CONSTRAINT audit_entries_event_id_ck CHECK (char_length(event_id) BETWEEN 1 AND 128),
        rail        text        NOT NULL,
        event_type  text        NOT NULL,
        customer_id text        NULL,
        decision    text        NOT NULL,
        reason      text        NOT NULL,
        actor       text        NOT NULL,
        request_id  text        NULL,
        details     jsonb       NOT NULL DEFAULT '{}'::jsonb,
        created_at  timestamptz NOT NULL,
        CONSTRAINT audit_entries_event_uq UNIQUE (project_id, env, event_id)
      )`);
    await q.query(`CREATE INDEX audit_entries_customer_idx ON audit_entries (project_id, env, customer_id, created_at)`);
    // Deliberate exception to "every index starts with (project_id, env)": the retention
    // purge is a cross-tenant maintenance scan by age, never a tenant read.
    await q.query(`CREATE INDEX audit_entries_retention_idx ON audit_entries (created_at)`);
    await q.query(`
      CREATE FUNCTION audit_entries_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP IN ('DELETE', 'TRUNCATE') AND current_setting('audit.retention_purge', true) = 'on' THEN
          IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
          RETURN NULL;
        END IF;
        RAISE EXCEPTION 'audit_entries is append-only: % refused', TG_OP
          USING ERRCODE = 'insufficient_privilege';
      END
      $$`);
    await q.query(`
      CREATE TRIGGER audit_entries_no_update_delete
        BEFORE UPDATE OR DELETE ON audit_entries
        FOR EACH ROW EXECUTE FUNCTION audit_entries_append_only()`);
    await q.query(`
      CREATE TRIGGER audit_entries_no_truncate
        BEFORE TRUNCATE ON audit_entries
        FOR EACH STATEMENT EXECUTE FUNCTION audit_entries_append_only()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS audit_entries`);
    await q.query(`DROP FUNCTION IF EXISTS audit_entries_append_only()`);
  }
}

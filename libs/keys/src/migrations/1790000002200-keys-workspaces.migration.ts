import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Workspaces group projects; a workspace key (`cd_wk_…`, SHA-256 only) reads every project of
 * its workspace. Operator settings, not tenant data. Also admits the `reads` bucket in the
 * project rate-limit overrides.
 */
export class KeysWorkspaces1790000002200 implements MigrationInterface {
  name = 'KeysWorkspaces1790000002200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE workspaces (
        id         text        PRIMARY KEY,
        name       text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
        created_at timestamptz NOT NULL
      )`);
    await q.query(`
      CREATE TABLE workspace_projects (
        workspace_id text        NOT NULL REFERENCES workspaces (id),
        project_id   text        NOT NULL REFERENCES projects (id),
        added_at     timestamptz NOT NULL,
        CONSTRAINT workspace_projects_pk PRIMARY KEY (workspace_id, project_id)
      )`);
    await q.query(`
      CREATE TABLE workspace_keys (
        id           text        PRIMARY KEY,
        workspace_id text        NOT NULL REFERENCES workspaces (id),
        name         text        NULL,
        secret_hash  text        NOT NULL UNIQUE CHECK (secret_hash ~ '^[0-9a-f]{64}$'),
        last4        text        NOT NULL,
        scopes       jsonb       NOT NULL DEFAULT '[]'::jsonb,
        status       text        NOT NULL CHECK (status IN ('active', 'revoked')),
        created_at   timestamptz NOT NULL,
        revoked_at   timestamptz NULL
      )`);
    await q.query(`CREATE INDEX workspace_keys_workspace_idx ON workspace_keys (workspace_id)`);
    // The read API's `reads` bucket may be overridden per project like the others.
    await q.query(`ALTER TABLE project_rate_limits DROP CONSTRAINT project_rate_limits_bucket_check`);
    await q.query(`
      ALTER TABLE project_rate_limits ADD CONSTRAINT project_rate_limits_bucket_check
        CHECK (bucket IN ('events', 'purchases', 'entitlements', 'heartbeat', 'forget', 'alias', 'sourcemaps', 'reads'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM project_rate_limits WHERE bucket = 'reads'`);
    await q.query(`ALTER TABLE project_rate_limits DROP CONSTRAINT project_rate_limits_bucket_check`);
    await q.query(`
      ALTER TABLE project_rate_limits ADD CONSTRAINT project_rate_limits_bucket_check
        CHECK (bucket IN ('events', 'purchases', 'entitlements', 'heartbeat', 'forget', 'alias', 'sourcemaps'))`);
    await q.query(`DROP TABLE IF EXISTS workspace_keys`);
    await q.query(`DROP TABLE IF EXISTS workspace_projects`);
    await q.query(`DROP TABLE IF EXISTS workspaces`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

export class KeysSchema1790000000100 implements MigrationInterface {
  name = 'KeysSchema1790000000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE projects (
        id text PRIMARY KEY,
        name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
        archived_at timestamptz,
        created_at timestamptz NOT NULL
      )`);
    await q.query(`
      CREATE TABLE apps (
        id text PRIMARY KEY,
        project_id text NOT NULL REFERENCES projects(id),
        name text NOT NULL,
        platform text NOT NULL CHECK (platform IN ('ios', 'android', 'web')),
        bundle_id text,
        package_name text,
        allowed_origins jsonb NOT NULL DEFAULT '[]'::jsonb,
        sdk_min_version text,
        sdk_deprecated_versions jsonb NOT NULL DEFAULT '[]'::jsonb,
        verifier_config jsonb NOT NULL DEFAULT '{"logVerifierResults": null, "verifyContractsAtBoot": null}'::jsonb,
        error_noise_deny_list jsonb NOT NULL DEFAULT '{"version": 1, "patterns": []}'::jsonb,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        CHECK (platform <> 'ios' OR bundle_id IS NOT NULL),
        CHECK (platform <> 'android' OR package_name IS NOT NULL)
      )`);
    await q.query(`CREATE INDEX apps_project_idx ON apps (project_id, created_at)`);
    // Publishable keys are stored in plaintext (they identify the app); secret keys only as SHA-256.
    await q.query(`
      CREATE TABLE api_keys (
        id text PRIMARY KEY,
        project_id text NOT NULL REFERENCES projects(id),
        app_id text NOT NULL REFERENCES apps(id),
        env text NOT NULL CHECK (env IN ('sandbox', 'production')),
        kind text NOT NULL CHECK (kind IN ('publishable', 'secret')),
        publishable_key text UNIQUE,
        secret_hash text UNIQUE CHECK (secret_hash IS NULL OR secret_hash ~ '^[0-9a-f]{64}$'),
        last4 text NOT NULL,
        scopes jsonb NOT NULL DEFAULT '[]'::jsonb,
        status text NOT NULL CHECK (status IN ('active', 'rotated_out', 'revoked')),
        expires_at timestamptz,
        revoked_at timestamptz,
        rotated_from text REFERENCES api_keys(id),
        created_at timestamptz NOT NULL,
        CHECK ((kind = 'publishable' AND publishable_key IS NOT NULL AND secret_hash IS NULL)
            OR (kind = 'secret' AND secret_hash IS NOT NULL AND publishable_key IS NULL)),
        CHECK (status <> 'rotated_out' OR expires_at IS NOT NULL)
      )`);
    await q.query(`CREATE INDEX api_keys_app_idx ON api_keys (app_id, env, kind)`);
    // Each app holds one active publishable and one active secret key per environment.
    await q.query(`CREATE UNIQUE INDEX api_keys_one_active_idx ON api_keys (app_id, env, kind) WHERE status = 'active'`);
    await q.query(`
      CREATE TABLE key_activity (
        id bigserial PRIMARY KEY,
        project_id text NOT NULL REFERENCES projects(id),
        key_id text NOT NULL REFERENCES api_keys(id),
        action text NOT NULL CHECK (action IN ('created', 'rotated', 'revoked')),
        at timestamptz NOT NULL,
        request_id text
      )`);
    await q.query(`CREATE INDEX key_activity_project_idx ON key_activity (project_id, at DESC, id DESC)`);
    await q.query(`
      CREATE TABLE project_rate_limits (
        project_id text NOT NULL REFERENCES projects(id),
        bucket text NOT NULL CHECK (bucket IN ('events', 'purchases', 'entitlements', 'heartbeat', 'forget', 'alias')),
        sustained double precision NOT NULL CHECK (sustained > 0),
        burst double precision NOT NULL CHECK (burst >= 1),
        updated_at timestamptz NOT NULL,
        PRIMARY KEY (project_id, bucket)
      )`);
    await q.query(`
      CREATE TABLE sdk_liveness (
        project_id text NOT NULL REFERENCES projects(id),
        env text NOT NULL CHECK (env IN ('sandbox', 'production')),
        app_id text NOT NULL REFERENCES apps(id),
        surface text NOT NULL,
        sdk_name text,
        sdk_version text,
        first_seen_at timestamptz NOT NULL,
        last_seen_at timestamptz NOT NULL,
        PRIMARY KEY (project_id, env, app_id, surface)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS sdk_liveness, project_rate_limits, key_activity, api_keys, apps, projects`);
  }
}

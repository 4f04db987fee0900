import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Connector sign-in (OAuth 2.1): registered clients, one-time authorization codes and
 * refresh tokens (both stored as SHA-256 only). A refresh token belongs to a family (one
 * consent); rotation marks it `rotated`, reuse revokes the family. Access tokens are
 * workspace keys (`workspace_keys`).
 */
export class ConsoleOauth1790000003010 implements MigrationInterface {
  name = 'ConsoleOauth1790000003010';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE oauth_clients (
        id               text        PRIMARY KEY CHECK (id ~ '^oc_[A-Za-z0-9]+$'),
        name             text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
        redirect_uris    jsonb       NOT NULL CHECK (jsonb_typeof(redirect_uris) = 'array' AND jsonb_array_length(redirect_uris) BETWEEN 1 AND 10),
        application_type text        NOT NULL CHECK (application_type IN ('native', 'web')),
        created_at       timestamptz NOT NULL
      )`);
    await q.query(`
      CREATE TABLE oauth_codes (
        code_hash      text        PRIMARY KEY CHECK (code_hash ~ '^[0-9a-f]{64}$'),
        client_id      text        NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
        workspace_id   text        NOT NULL REFERENCES workspaces (id),
        scopes         jsonb       NOT NULL,
        redirect_uri   text        NOT NULL,
        code_challenge text        NOT NULL,
        challenge_method text      NOT NULL CHECK (challenge_method = 'S256'),
        expires_at     timestamptz NOT NULL,
        used_at        timestamptz NULL
      )`);
    await q.query(`
      CREATE TABLE oauth_refresh_tokens (
        token_hash    text        PRIMARY KEY CHECK (token_hash ~ '^[0-9a-f]{64}$'),
        family_id     text        NOT NULL,
        client_id     text        NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
        workspace_id  text        NOT NULL REFERENCES workspaces (id),
        scopes        jsonb       NOT NULL,
        access_key_id text        NULL REFERENCES workspace_keys (id),
        status        text        NOT NULL CHECK (status IN ('active', 'rotated', 'revoked')),
        created_at    timestamptz NOT NULL,
        expires_at    timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX oauth_refresh_tokens_family_idx ON oauth_refresh_tokens (family_id)`);
    // At most one live refresh token per family: rotation retires the old one in the same statement set.
    await q.query(`CREATE UNIQUE INDEX oauth_refresh_tokens_one_active ON oauth_refresh_tokens (family_id) WHERE status = 'active'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS oauth_refresh_tokens`);
    await q.query(`DROP TABLE IF EXISTS oauth_codes`);
    await q.query(`DROP TABLE IF EXISTS oauth_clients`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Workspace keys may carry an expiry (the access tokens of connector sign-in last an hour);
 * NULL, as for every key the operator mints, never expires.
 */
export class KeysWorkspaceKeyExpiry1790000003000 implements MigrationInterface {
  name = 'KeysWorkspaceKeyExpiry1790000003000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE workspace_keys ADD COLUMN expires_at timestamptz NULL`);
    await q.query(`ALTER TABLE workspace_keys ADD CONSTRAINT workspace_keys_expiry_after_creation CHECK (expires_at IS NULL OR expires_at > created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE workspace_keys DROP COLUMN IF EXISTS expires_at`);
  }
}

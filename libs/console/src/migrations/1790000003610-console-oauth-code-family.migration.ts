import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The family of tokens an authorization code was exchanged for, recorded when it is used: a
 * second use of the code revokes that family (its refresh tokens and their workspace keys).
 */
export class ConsoleOauthCodeFamily1790000003610 implements MigrationInterface {
  name = 'ConsoleOauthCodeFamily1790000003610';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE oauth_codes ADD COLUMN family_id text NULL`);
    await q.query(`ALTER TABLE oauth_codes ADD CONSTRAINT oauth_codes_family_used_ck CHECK (family_id IS NULL OR used_at IS NOT NULL)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE oauth_codes DROP COLUMN IF EXISTS family_id`);
  }
}

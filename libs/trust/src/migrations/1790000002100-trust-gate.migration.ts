import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The trust gate's per-project settings (operator API): the support address, the review rule
 * (email domains sent to review) and the block lists (user, email, domain, ip). Project
 * settings, not tenant data: they hold for both environments.
 */
export class TrustGate1790000002100 implements MigrationInterface {
  name = 'TrustGate1790000002100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE trust_settings (
        project_id           text        PRIMARY KEY REFERENCES projects (id),
        support_email        text        NULL,
        review_email_domains text[]      NOT NULL DEFAULT '{}',
        updated_at           timestamptz NOT NULL
      )`);
    await q.query(`
      CREATE TABLE trust_blocks (
        project_id text        NOT NULL REFERENCES projects (id),
        kind       text        NOT NULL CONSTRAINT trust_blocks_kind_ck CHECK (kind IN ('user', 'email', 'domain', 'ip')),
        value      text        NOT NULL CONSTRAINT trust_blocks_value_ck CHECK (char_length(value) BETWEEN 1 AND 320),
        reason     text        NOT NULL,
        created_at timestamptz NOT NULL,
        CONSTRAINT trust_blocks_pk PRIMARY KEY (project_id, kind, value)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS trust_blocks`);
    await q.query(`DROP TABLE IF EXISTS trust_settings`);
  }
}

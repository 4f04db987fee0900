import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Console sessions ended by sign-out, until the cookie would have expired anyway: every
 * replica refuses a signed cookie whose session id is listed here (one primary-key read per
 * request made with the cookie). Expired rows are deleted on the next sign-out.
 */
export class ConsoleSessionRevocations1790000003620 implements MigrationInterface {
  name = 'ConsoleSessionRevocations1790000003620';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE console_session_revocations (
        session_id text        PRIMARY KEY CONSTRAINT console_session_revocations_id_ck CHECK (session_id ~ '^[A-Za-z0-9_-]{16,64}$'),
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX console_session_revocations_expiry_idx ON console_session_revocations (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS console_session_revocations`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The last "test connection" of each rail of a project: when it ran, whether the store
 * accepted the project's credentials, the reason when it did not (never a credential), and
 * when they last worked. Credentials are a project's (the secrets file), so is this row.
 */
export class RailConnectionChecks1790000003671 implements MigrationInterface {
  name = 'RailConnectionChecks1790000003671';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE rail_connection_checks (
        project_id         text    NOT NULL REFERENCES projects (id),
        rail               text    NOT NULL CONSTRAINT rail_connection_checks_rail_ck CHECK (rail IN ('ios_store', 'card_payments', 'android_store')),
        env                text    NOT NULL CONSTRAINT rail_connection_checks_env_ck CHECK (env IN ('sandbox', 'production')),
        checked_at_ms      bigint  NOT NULL CONSTRAINT rail_connection_checks_checked_ck CHECK (checked_at_ms >= 0),
        ok                 boolean NOT NULL,
        message            text    NOT NULL CONSTRAINT rail_connection_checks_message_ck CHECK (length(message) <= 500),
        last_worked_at_ms  bigint  NULL,
        CONSTRAINT rail_connection_checks_pk PRIMARY KEY (project_id, rail),
        CONSTRAINT rail_connection_checks_worked_ck CHECK (NOT ok OR last_worked_at_ms = checked_at_ms)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS rail_connection_checks`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What bulk user migration stores beside the alias graph: one row per migrated developer
 * user id with the customer it resolved to and the `displayName` the developer sent (the
 * customers table has no display-name column; email and traits go to the customer itself).
 * Personal data: the erasure hook `migration.migrated_users` deletes a forgotten customer's rows.
 */
export class MigratedUsers1790000000800 implements MigrationInterface {
  name = 'MigratedUsers1790000000800';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE migrated_users (
        project_id        text        NOT NULL,
        env               text        NOT NULL CONSTRAINT migrated_users_env_ck CHECK (env IN ('sandbox', 'production')),
        developer_user_id text        NOT NULL CONSTRAINT migrated_users_developer_ck CHECK (char_length(developer_user_id) BETWEEN 1 AND 256),
        customer_id       text        NOT NULL CONSTRAINT migrated_users_customer_ck CHECK (starts_with(customer_id, 'cdcust_')),
        display_name      text        NULL,
        created_at        timestamptz NOT NULL,
        updated_at        timestamptz NOT NULL,
        CONSTRAINT migrated_users_pk PRIMARY KEY (project_id, env, developer_user_id)
      )`);
    await q.query(`CREATE INDEX migrated_users_customer_idx ON migrated_users (project_id, env, customer_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS migrated_users`);
  }
}

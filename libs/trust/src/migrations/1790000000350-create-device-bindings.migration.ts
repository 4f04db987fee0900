import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Device bindings of the trust tiers: a device (anonymousId) that reached tier 3 is bound to
 * the verified customer and user with the time of verification (the 90-day window).
 */
export class CreateDeviceBindings1790000000350 implements MigrationInterface {
  name = 'CreateDeviceBindings1790000000350';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE device_bindings (
        project_id   text        NOT NULL,
        env          text        NOT NULL CONSTRAINT device_bindings_env_ck CHECK (env IN ('sandbox', 'production')),
        anonymous_id text        NOT NULL,
        customer_id  text        NOT NULL REFERENCES customers (id),
        user_id      text        NOT NULL,
        verified_at  timestamptz NOT NULL,
        created_at   timestamptz NOT NULL,
        updated_at   timestamptz NOT NULL,
        CONSTRAINT device_bindings_pk PRIMARY KEY (project_id, env, anonymous_id)
      )`);
    await q.query(`CREATE INDEX device_bindings_customer_idx ON device_bindings (project_id, env, customer_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS device_bindings`);
  }
}

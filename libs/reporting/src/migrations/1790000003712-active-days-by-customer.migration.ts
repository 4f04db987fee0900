import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A customer's last active day (the console's "last seen") is the first entry of this index. */
export class ActiveDaysByCustomer1790000003712 implements MigrationInterface {
  name = 'ActiveDaysByCustomer1790000003712';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX IF NOT EXISTS reporting_active_days_customer_idx ON reporting_active_days (project_id, env, customer_id, day DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS reporting_active_days_customer_idx`);
  }
}

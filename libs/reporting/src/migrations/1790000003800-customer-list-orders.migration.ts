import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The console's customer list sorted by MRR or by last seen starts from the table kept in that
 * order: each customer's total in the reporting currency by (amount, customer) and each
 * customer's last active day by (day, customer), both ways, so a page reads its rows in index
 * order and stops at the page's end instead of ranking every customer of the scope.
 */
export class CustomerListOrders1790000003800 implements MigrationInterface {
  name = 'CustomerListOrders1790000003800';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX IF NOT EXISTS revenue_customer_totals_list_idx ON revenue_customer_totals (project_id, env, currency, monthly_minor DESC, customer_id DESC)`,
    );
    await q.query(`CREATE INDEX IF NOT EXISTS reporting_active_last_days_list_idx ON reporting_active_last_days (project_id, env, day DESC, customer_id DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS reporting_active_last_days_list_idx`);
    await q.query(`DROP INDEX IF EXISTS revenue_customer_totals_list_idx`);
  }
}

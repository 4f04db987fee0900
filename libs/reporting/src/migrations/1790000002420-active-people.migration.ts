import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `reporting_active_days`: each customer once per UTC day it sent events, fed by the event
 * identity resolver in the transaction that resolves the events' customer, so that "active
 * people in 30 days" counts this rollup, never the raw events.
 *
 * `revenue_subscriptions.valid_until`: the end of the subscription's period, so that the
 * ledger's lapse scan stops counting a subscription whose period ended without the rail
 * reporting a renewal or an end. Its index is a deliberate exception to "every index starts
 * with (project_id, env)": the scan runs across tenants by due time (as the jobs queue).
 */
export class ActivePeopleAndLapses1790000002420 implements MigrationInterface {
  name = 'ActivePeopleAndLapses1790000002420';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE reporting_active_days (
        project_id  text NOT NULL,
        env         text NOT NULL CHECK (env IN ('sandbox', 'production')),
        day         date NOT NULL,
        customer_id text NOT NULL,
        CONSTRAINT reporting_active_days_pk PRIMARY KEY (project_id, env, day, customer_id),
        CONSTRAINT reporting_active_days_customer_fk FOREIGN KEY (project_id, env, customer_id) REFERENCES customers (project_id, env, id)
      )`);
    await q.query(`ALTER TABLE revenue_subscriptions ADD COLUMN valid_until timestamptz NULL`);
    await q.query(`CREATE INDEX revenue_subscriptions_lapse_idx ON revenue_subscriptions (valid_until) WHERE active AND valid_until IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS revenue_subscriptions_lapse_idx`);
    await q.query(`ALTER TABLE revenue_subscriptions DROP COLUMN IF EXISTS valid_until`);
    await q.query(`DROP TABLE IF EXISTS reporting_active_days`);
  }
}

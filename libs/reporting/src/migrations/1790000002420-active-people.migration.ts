import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `reporting_active_days`: each customer once per UTC day it sent events, fed by the event
 * identity resolver in the transaction that resolves the events' customer, so that "active
 * people in 30 days" counts this rollup, never the raw events.
 */
export class ActivePeople1790000002420 implements MigrationInterface {
  name = 'ActivePeople1790000002420';

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
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS reporting_active_days`);
  }
}

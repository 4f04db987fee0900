import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A customer's latest events (the console's customer page) read newest first from an index
 * that ends with timestamp_ms. It replaces events_customer_idx, whose columns are its prefix,
 * so ingestion maintains the same number of indexes.
 */
export class EventsCustomerRecentIndex1790000002630 implements MigrationInterface {
  name = 'EventsCustomerRecentIndex1790000002630';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX IF NOT EXISTS events_customer_recent_idx ON events (project_id, env, customer_id, timestamp_ms DESC) WHERE customer_id IS NOT NULL`,
    );
    await q.query(`DROP INDEX IF EXISTS events_customer_idx`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX IF NOT EXISTS events_customer_idx ON events (project_id, env, customer_id) WHERE customer_id IS NOT NULL`);
    await q.query(`DROP INDEX IF EXISTS events_customer_recent_idx`);
  }
}

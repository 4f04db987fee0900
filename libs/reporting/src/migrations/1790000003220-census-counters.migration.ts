import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Shard rows per scope of the customer count: a writing connection adds to one of them. */
export const CUSTOMER_COUNT_SHARDS = 8;

/**
 * The census reads as point reads of counters kept with the data they count.
 *
 * Active people: `reporting_active_last_days` holds each customer's last active day (and in
 * `prev_day` the day it held before its last move), `reporting_active_day_counts` how many
 * customers have each day as their last; the activity feed moves both with its day row.
 * Customers active in [T, today] are those whose last day is in it: a sum of at most 30 rows.
 * Like `reporting_active_days`, they keep a merged or forgotten customer's past activity.
 *
 * Total customers: `reporting_customer_counts`, the scope's customers not forgotten, kept by
 * triggers on `customers` (integrity in the schema: every writer of customers counts,
 * including bulk imports). A connection adds to shard `pg_backend_pid() % 8`, so concurrent
 * writers rarely wait on one row and a transaction locks one shard row per scope (no
 * deadlock between two of them); a shard may go negative, the sum is exact. New rows are
 * counted once per statement (its transition table), forgetting and erasing once per row.
 */
export class CensusCounters1790000003220 implements MigrationInterface {
  name = 'CensusCounters1790000003220';

  async up(q: QueryRunner): Promise<void> {
    const env = (table: string) => `env text NOT NULL CONSTRAINT ${table}_env_ck CHECK (env IN ('sandbox', 'production'))`;
    await q.query(`
      CREATE TABLE reporting_active_last_days (
        project_id  text NOT NULL,
        ${env('reporting_active_last_days')},
        customer_id text NOT NULL,
        day         date NOT NULL,
        prev_day    date NULL,
        CONSTRAINT reporting_active_last_days_pk PRIMARY KEY (project_id, env, customer_id),
        CONSTRAINT reporting_active_last_days_customer_fk FOREIGN KEY (project_id, env, customer_id) REFERENCES customers (project_id, env, id)
      )`);
    await q.query(`
      CREATE TABLE reporting_active_day_counts (
        project_id text   NOT NULL,
        ${env('reporting_active_day_counts')},
        day        date   NOT NULL,
        customers  bigint NOT NULL,
        CONSTRAINT reporting_active_day_counts_pk PRIMARY KEY (project_id, env, day)
      )`);
    await q.query(`
      CREATE TABLE reporting_customer_counts (
        project_id text     NOT NULL,
        ${env('reporting_customer_counts')},
        shard      smallint NOT NULL CONSTRAINT reporting_customer_counts_shard_ck CHECK (shard BETWEEN 0 AND ${CUSTOMER_COUNT_SHARDS - 1}),
        customers  bigint   NOT NULL,
        CONSTRAINT reporting_customer_counts_pk PRIMARY KEY (project_id, env, shard)
      )`);
    await q.query(`
      CREATE FUNCTION reporting_count_customers(p_project text, p_env text, p_delta bigint) RETURNS void LANGUAGE sql AS $$
        INSERT INTO reporting_customer_counts AS c (project_id, env, shard, customers)
        VALUES (p_project, p_env, pg_backend_pid() % ${CUSTOMER_COUNT_SHARDS}, p_delta)
        ON CONFLICT (project_id, env, shard) DO UPDATE SET customers = c.customers + EXCLUDED.customers
      $$`);
    await q.query(`
      CREATE FUNCTION reporting_customers_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM reporting_count_customers(project_id, env, n)
           FROM (SELECT project_id, env, count(*) AS n FROM inserted WHERE forgotten_at IS NULL GROUP BY project_id, env ORDER BY project_id, env) s;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE FUNCTION reporting_customer_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP <> 'INSERT' AND OLD.forgotten_at IS NULL THEN PERFORM reporting_count_customers(OLD.project_id, OLD.env, -1); END IF;
        IF TG_OP <> 'DELETE' AND NEW.forgotten_at IS NULL THEN PERFORM reporting_count_customers(NEW.project_id, NEW.env, 1); END IF;
        RETURN NULL;
      END $$`);
    // The triggers lock customers against writes until the backfill below commits with them.
    await q.query(`
      CREATE TRIGGER reporting_customers_inserted AFTER INSERT ON customers
        REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION reporting_customers_inserted()`);
    await q.query(`
      CREATE TRIGGER reporting_customer_forgotten AFTER UPDATE OF forgotten_at, project_id, env ON customers FOR EACH ROW
        WHEN ((OLD.forgotten_at IS NULL) IS DISTINCT FROM (NEW.forgotten_at IS NULL) OR OLD.project_id IS DISTINCT FROM NEW.project_id OR OLD.env IS DISTINCT FROM NEW.env)
        EXECUTE FUNCTION reporting_customer_changed()`);
    await q.query(`CREATE TRIGGER reporting_customer_deleted AFTER DELETE ON customers FOR EACH ROW EXECUTE FUNCTION reporting_customer_changed()`);
    await q.query(`
      INSERT INTO reporting_customer_counts (project_id, env, shard, customers)
      SELECT project_id, env, 0, count(*) FROM customers WHERE forgotten_at IS NULL GROUP BY project_id, env`);
    await q.query(`
      INSERT INTO reporting_active_last_days (project_id, env, customer_id, day)
      SELECT project_id, env, customer_id, max(day) FROM reporting_active_days GROUP BY project_id, env, customer_id`);
    await q.query(`
      INSERT INTO reporting_active_day_counts (project_id, env, day, customers)
      SELECT project_id, env, day, count(*) FROM reporting_active_last_days GROUP BY project_id, env, day`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS reporting_customer_deleted ON customers`);
    await q.query(`DROP TRIGGER IF EXISTS reporting_customer_forgotten ON customers`);
    await q.query(`DROP TRIGGER IF EXISTS reporting_customers_inserted ON customers`);
    await q.query(`DROP FUNCTION IF EXISTS reporting_customer_changed()`);
    await q.query(`DROP FUNCTION IF EXISTS reporting_customers_inserted()`);
    await q.query(`DROP FUNCTION IF EXISTS reporting_count_customers(text, text, bigint)`);
    await q.query(`DROP TABLE IF EXISTS reporting_customer_counts`);
    await q.query(`DROP TABLE IF EXISTS reporting_active_day_counts`);
    await q.query(`DROP TABLE IF EXISTS reporting_active_last_days`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

const ENV = `text NOT NULL CHECK (env IN ('sandbox', 'production'))`;
const GRANULARITY = `text NOT NULL CHECK (granularity IN ('week', 'month'))`;

/**
 * Distinct active customers per week and month, exact, kept with the activity rollup
 * (`reporting_active_days`): a week's active customers are not the sum of its days.
 *
 * - `reporting_active_periods`: each customer once per week (from Monday) and month it was
 *   active in, with its first and last active day there (`prev_first`/`prev_last`: the days
 *   they held before the row's last move, so one statement moves the counts below).
 * - `active_period_days`: per granularity and day, the customers whose first (`firsts`) and last
 *   (`lasts`) active day in their period is that day. A period's distinct customers are its
 *   `firsts` summed; clipped to a range starting inside it, its `lasts` from the range's first
 *   day; clipped to a range ending inside it, its `firsts` up to the range's last day. A chart
 *   reads at most one row per day of its range.
 *
 * Filled here from the existing day rows, the rollup locked meanwhile. Like the day rows, they
 * keep a merged or forgotten customer's past activity.
 */
export class ActivePeriods1790000003960 implements MigrationInterface {
  name = 'ActivePeriods1790000003960';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`LOCK TABLE reporting_active_days IN SHARE ROW EXCLUSIVE MODE`);
    await q.query(`
      CREATE TABLE reporting_active_periods (
        project_id  text NOT NULL,
        env         ${ENV},
        granularity ${GRANULARITY},
        period      date NOT NULL,
        customer_id text NOT NULL,
        first_day   date NOT NULL,
        last_day    date NOT NULL,
        prev_first  date NULL,
        prev_last   date NULL,
        CONSTRAINT reporting_active_periods_days_ck CHECK (period <= first_day AND first_day <= last_day),
        CONSTRAINT reporting_active_periods_pk PRIMARY KEY (project_id, env, granularity, period, customer_id),
        CONSTRAINT reporting_active_periods_customer_fk FOREIGN KEY (project_id, env, customer_id) REFERENCES customers (project_id, env, id)
      )`);
    await q.query(`
      CREATE TABLE active_period_days (
        project_id  text   NOT NULL,
        env         ${ENV},
        granularity ${GRANULARITY},
        day         date   NOT NULL,
        firsts      bigint NOT NULL,
        lasts       bigint NOT NULL,
        CONSTRAINT active_period_days_pk PRIMARY KEY (project_id, env, granularity, day) INCLUDE (firsts, lasts)
      )`);
    await q.query(`
      INSERT INTO reporting_active_periods (project_id, env, granularity, period, customer_id, first_day, last_day)
      SELECT project_id, env, g, date_trunc(g, day::timestamp)::date, customer_id, min(day), max(day)
        FROM reporting_active_days, (VALUES ('week'), ('month')) v(g)
       GROUP BY 1, 2, 3, 4, 5`);
    await q.query(`
      INSERT INTO active_period_days (project_id, env, granularity, day, firsts, lasts)
      SELECT project_id, env, granularity, day, sum(f), sum(l) FROM (
        SELECT project_id, env, granularity, first_day AS day, 1 AS f, 0 AS l FROM reporting_active_periods
        UNION ALL
        SELECT project_id, env, granularity, last_day, 0, 1 FROM reporting_active_periods
      ) e GROUP BY 1, 2, 3, 4`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS active_period_days`);
    await q.query(`DROP TABLE IF EXISTS reporting_active_periods`);
  }
}

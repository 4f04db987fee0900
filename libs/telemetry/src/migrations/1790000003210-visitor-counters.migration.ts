import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Exact distinct-visitor counts over a window without counting visitor rows: the event write
 * keeps, per host, each visitor's last day with a page view (`analytics_visitor_last_days`;
 * `prev_day` is the day it held before its last move) and how many visitors have each day as
 * their last (`analytics_visitor_day_counts`). A visitor seen on or after day T is one whose
 * last day is on or after T, so the window's distinct visitors are the sum of at most 90
 * small rows. Both tables follow `analytics_daily_visitors`: the event statement moves a
 * visitor when it writes a new visitor day, the erasure removes a forgotten visitor, the
 * retention purge drops days past the retention from both. A day's count may go to zero
 * and stay; a count row is never negative within the retention.
 *
 * Neither table has an index on the day alone (the event write would maintain it): the
 * hourly purge scans them, as it does the other per-day rollups.
 */
export class VisitorCounters1790000003210 implements MigrationInterface {
  name = 'VisitorCounters1790000003210';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE analytics_visitor_last_days (
        project_id text NOT NULL,
        env        text NOT NULL CONSTRAINT analytics_visitor_last_days_env_ck CHECK (env IN ('sandbox', 'production')),
        host       text NOT NULL,
        visitor    text NOT NULL,
        day        date NOT NULL,
        prev_day   date NULL,
        CONSTRAINT analytics_visitor_last_days_pk PRIMARY KEY (project_id, env, host, visitor)
      )`);
    await q.query(`
      CREATE TABLE analytics_visitor_day_counts (
        project_id text   NOT NULL,
        env        text   NOT NULL CONSTRAINT analytics_visitor_day_counts_env_ck CHECK (env IN ('sandbox', 'production')),
        host       text   NOT NULL,
        day        date   NOT NULL,
        visitors   bigint NOT NULL,
        CONSTRAINT analytics_visitor_day_counts_pk PRIMARY KEY (project_id, env, host, day)
      )`);
    await q.query(`
      INSERT INTO analytics_visitor_last_days (project_id, env, host, visitor, day)
      SELECT project_id, env, host, visitor, max(day) FROM analytics_daily_visitors GROUP BY project_id, env, host, visitor`);
    await q.query(`
      INSERT INTO analytics_visitor_day_counts (project_id, env, host, day, visitors)
      SELECT project_id, env, host, day, count(*) FROM analytics_visitor_last_days GROUP BY project_id, env, host, day`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS analytics_visitor_day_counts`);
    await q.query(`DROP TABLE IF EXISTS analytics_visitor_last_days`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per-day rollups the event write maintains in its own statement (first deliveries only),
 * so that error, analytics and acquisition reads never scan the raw events:
 *
 * - `error_daily_rollups`: occurrences, first and last seen and the latest exception type
 *   per fingerprint and UTC day (of the event's client day);
 * - `error_affected_users`: each developer user id an error hit, with its hits and last hit;
 * - `analytics_daily_hosts` / `_visitors` / `_pages` / `_referrers`: `page.viewed` views and
 *   distinct visitors per host and day, views per path and per referrer host;
 * - `acquisition_first_touch`: the first-touch source of an anonymous id (a campaign
 *   arrival's ref wins over the source of its first anonymous page view);
 *   `acquisition_signups`: each customer counted once, under its first touch's source.
 *
 * Every key starts with (project_id, env); counters are CHECKed non-negative.
 */
export class EventRollups1790000002500 implements MigrationInterface {
  name = 'EventRollups1790000002500';

  async up(q: QueryRunner): Promise<void> {
    const env = (table: string) => `env text NOT NULL CONSTRAINT ${table}_env_ck CHECK (env IN ('sandbox', 'production'))`;
    const count = (table: string, column: string) => `${column} bigint NOT NULL CONSTRAINT ${table}_${column}_ck CHECK (${column} >= 0)`;
    await q.query(`
      CREATE TABLE error_daily_rollups (
        project_id     text   NOT NULL,
        ${env('error_daily_rollups')},
        fingerprint    text   NOT NULL CONSTRAINT error_daily_rollups_fingerprint_ck CHECK (fingerprint ~ '^[0-9a-f]{8}$'),
        day            date   NOT NULL,
        ${count('error_daily_rollups', 'occurrences')},
        first_seen_ms  bigint NOT NULL,
        last_seen_ms   bigint NOT NULL,
        exception_type text   NULL,
        CONSTRAINT error_daily_rollups_pk PRIMARY KEY (project_id, env, fingerprint, day),
        CONSTRAINT error_daily_rollups_seen_ck CHECK (first_seen_ms <= last_seen_ms)
      )`);
    await q.query(`
      CREATE TABLE error_affected_users (
        project_id   text   NOT NULL,
        ${env('error_affected_users')},
        fingerprint  text   NOT NULL CONSTRAINT error_affected_users_fingerprint_ck CHECK (fingerprint ~ '^[0-9a-f]{8}$'),
        user_id      text   NOT NULL,
        ${count('error_affected_users', 'hits')},
        first_hit_ms bigint NOT NULL,
        last_hit_ms  bigint NOT NULL,
        CONSTRAINT error_affected_users_pk PRIMARY KEY (project_id, env, fingerprint, user_id)
      )`);
    await q.query(`
      CREATE TABLE analytics_daily_hosts (
        project_id text NOT NULL,
        ${env('analytics_daily_hosts')},
        host       text NOT NULL,
        day        date NOT NULL,
        ${count('analytics_daily_hosts', 'views')},
        ${count('analytics_daily_hosts', 'visitors')},
        CONSTRAINT analytics_daily_hosts_pk PRIMARY KEY (project_id, env, host, day)
      )`);
    await q.query(`
      CREATE TABLE analytics_daily_visitors (
        project_id text NOT NULL,
        ${env('analytics_daily_visitors')},
        host       text NOT NULL,
        day        date NOT NULL,
        visitor    text NOT NULL,
        CONSTRAINT analytics_daily_visitors_pk PRIMARY KEY (project_id, env, host, day, visitor)
      )`);
    // Deliberate exception to "every index starts with (project_id, env)": the partition
    // maintenance purges visitor days past the retention across tenants, by day.
    await q.query(`CREATE INDEX analytics_daily_visitors_day_idx ON analytics_daily_visitors (day)`);
    await q.query(`
      CREATE TABLE analytics_daily_pages (
        project_id text NOT NULL,
        ${env('analytics_daily_pages')},
        host       text NOT NULL,
        day        date NOT NULL,
        path       text NOT NULL,
        ${count('analytics_daily_pages', 'views')},
        CONSTRAINT analytics_daily_pages_pk PRIMARY KEY (project_id, env, host, day, path)
      )`);
    await q.query(`
      CREATE TABLE analytics_daily_referrers (
        project_id    text NOT NULL,
        ${env('analytics_daily_referrers')},
        host          text NOT NULL,
        day           date NOT NULL,
        referrer_host text NOT NULL,
        ${count('analytics_daily_referrers', 'views')},
        CONSTRAINT analytics_daily_referrers_pk PRIMARY KEY (project_id, env, host, day, referrer_host)
      )`);
    await q.query(`
      CREATE TABLE acquisition_first_touch (
        project_id    text   NOT NULL,
        ${env('acquisition_first_touch')},
        anonymous_id  text   NOT NULL,
        source        text   NOT NULL CONSTRAINT acquisition_first_touch_source_ck CHECK (char_length(source) BETWEEN 1 AND 256),
        kind          text   NOT NULL CONSTRAINT acquisition_first_touch_kind_ck CHECK (kind IN ('arrival', 'page_view')),
        touched_at_ms bigint NOT NULL,
        CONSTRAINT acquisition_first_touch_pk PRIMARY KEY (project_id, env, anonymous_id)
      )`);
    await q.query(`
      CREATE TABLE acquisition_signups (
        project_id    text   NOT NULL,
        ${env('acquisition_signups')},
        customer_id   text   NOT NULL,
        source        text   NOT NULL,
        counted_at_ms bigint NOT NULL,
        CONSTRAINT acquisition_signups_pk PRIMARY KEY (project_id, env, customer_id),
        CONSTRAINT acquisition_signups_customer_fk FOREIGN KEY (project_id, env, customer_id)
          REFERENCES customers (project_id, env, id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX acquisition_signups_source_idx ON acquisition_signups (project_id, env, source)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'acquisition_signups',
      'acquisition_first_touch',
      'analytics_daily_referrers',
      'analytics_daily_pages',
      'analytics_daily_visitors',
      'analytics_daily_hosts',
      'error_affected_users',
      'error_daily_rollups',
    ]) {
      await q.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}

import { Injectable } from '@nestjs/common';
import { Sql, type TenantScope } from '#platform';

export interface ErrorRollupRow {
  occurrences: number;
  firstSeenMs: number;
  lastSeenMs: number;
  exceptionType: string | null;
  level: string | null;
  users: number;
}

export interface AffectedUserRow {
  userId: string;
  lastHitMs: number;
}

export interface DailyViewsRow {
  date: string;
  views: number;
  uniqueVisitors: number;
}

export type BreakdownDimension = 'top_pages' | 'top_referrers';

/** Reads of the per-day rollups the event write maintains; every query reads rollup rows by their leading key. */
@Injectable()
export class EventRollupsRepository {
  constructor(private readonly sql: Sql) {}

  async error(scope: TenantScope, fingerprint: string): Promise<ErrorRollupRow | null> {
    const row = await this.sql.one<Record<string, string | null>>(
      `SELECT sum(d.occurrences) AS occurrences, min(d.first_seen_ms) AS first_seen, max(d.last_seen_ms) AS last_seen,
              (array_agg(d.exception_type ORDER BY d.last_seen_ms DESC) FILTER (WHERE d.exception_type IS NOT NULL))[1] AS exception_type,
              (SELECT last_level FROM error_issues WHERE project_id = $1 AND env = $2 AND fingerprint = $3) AS level,
              (SELECT users FROM error_affected_user_counts WHERE project_id = $1 AND env = $2 AND fingerprint = $3) AS users
         FROM error_daily_rollups d WHERE d.project_id = $1 AND d.env = $2 AND d.fingerprint = $3`,
      [scope.projectId, scope.env, fingerprint],
    );
    if (!row || row.occurrences === null) return null;
    return {
      occurrences: Number(row.occurrences),
      firstSeenMs: Number(row.first_seen),
      lastSeenMs: Number(row.last_seen),
      exceptionType: row.exception_type,
      level: row.level,
      users: Number(row.users ?? 0),
    };
  }

  /** Distinct developer user ids each fingerprint hit (its maintained count); 0 when none. */
  async affectedUserCounts(scope: TenantScope, fingerprints: readonly string[]): Promise<Map<string, number>> {
    if (fingerprints.length === 0) return new Map();
    const rows = await this.sql.rows<{ fingerprint: string; n: string }>(
      `SELECT fingerprint, users AS n FROM error_affected_user_counts WHERE project_id = $1 AND env = $2 AND fingerprint = ANY($3::text[])`,
      [scope.projectId, scope.env, fingerprints],
    );
    const counts = new Map(fingerprints.map((f) => [f, 0]));
    for (const r of rows) counts.set(r.fingerprint, Number(r.n));
    return counts;
  }

  /** The developer user ids an error hit, most recent first, at most `limit`. */
  async affectedUsers(scope: TenantScope, fingerprint: string, limit: number): Promise<AffectedUserRow[]> {
    const rows = await this.sql.rows<{ user_id: string; last_hit_ms: string }>(
      `SELECT user_id, last_hit_ms FROM error_affected_users WHERE project_id = $1 AND env = $2 AND fingerprint = $3
        ORDER BY last_hit_ms DESC, user_id LIMIT $4`,
      [scope.projectId, scope.env, fingerprint, limit],
    );
    return rows.map((r) => ({ userId: r.user_id, lastHitMs: Number(r.last_hit_ms) }));
  }

  /** Views and distinct visitors of a host per day from `fromDay`, and over the whole window. */
  async views(scope: TenantScope, host: string, fromDay: string): Promise<{ series: DailyViewsRow[]; uniqueVisitors: number }> {
    const series = await this.sql.rows<{ date: string; views: string; visitors: string }>(
      `SELECT to_char(day, 'YYYY-MM-DD') AS date, views, visitors FROM analytics_daily_hosts
        WHERE project_id = $1 AND env = $2 AND host = $3 AND day >= $4::date ORDER BY day`,
      [scope.projectId, scope.env, host, fromDay],
    );
    // Visitors seen on or after fromDay are those whose last day is: a sum of per-day counts.
    const unique = await this.sql.one<{ n: string }>(
      `SELECT coalesce(sum(visitors), 0) AS n FROM analytics_visitor_day_counts WHERE project_id = $1 AND env = $2 AND host = $3 AND day >= $4::date`,
      [scope.projectId, scope.env, host, fromDay],
    );
    return {
      series: series.map((r) => ({ date: r.date, views: Number(r.views), uniqueVisitors: Number(r.visitors) })),
      uniqueVisitors: Number(unique?.n ?? 0),
    };
  }

  async breakdown(
    scope: TenantScope,
    host: string,
    dimension: BreakdownDimension,
    fromDay: string,
    limit: number,
  ): Promise<Array<{ key: string; views: number }>> {
    const [table, column] = dimension === 'top_pages' ? ['analytics_daily_pages', 'path'] : ['analytics_daily_referrers', 'referrer_host'];
    const rows = await this.sql.rows<{ key: string; views: string }>(
      `SELECT ${column} AS key, sum(views) AS views FROM ${table}
        WHERE project_id = $1 AND env = $2 AND host = $3 AND day >= $4::date
        GROUP BY ${column} ORDER BY sum(views) DESC, ${column} LIMIT $5`,
      [scope.projectId, scope.env, host, fromDay, limit],
    );
    return rows.map((r) => ({ key: r.key, views: Number(r.views) }));
  }

  /** Records a campaign arrival's ref as the anonymous id's first touch (over a page view's, never over another arrival's). */
  async recordArrival(scope: TenantScope, anonymousId: string, ref: string, atMs: number): Promise<void> {
    await this.sql.run(
      `INSERT INTO acquisition_first_touch AS t (project_id, env, anonymous_id, source, kind, touched_at_ms)
       VALUES ($1, $2, $3, $4, 'arrival', $5)
       ON CONFLICT (project_id, env, anonymous_id) DO UPDATE SET source = EXCLUDED.source, kind = 'arrival', touched_at_ms = EXCLUDED.touched_at_ms
        WHERE t.kind = 'page_view'`,
      [scope.projectId, scope.env, anonymousId, ref, atMs],
    );
  }

  /** Counts a customer once, under the first touch of the anonymous id it came from (nothing when that id has none). */
  async countSignup(scope: TenantScope, customerId: string, anonymousId: string, atMs: number): Promise<void> {
    await this.sql.run(
      `INSERT INTO acquisition_signups (project_id, env, customer_id, source, counted_at_ms)
       SELECT $1, $2, $3, source, $5 FROM acquisition_first_touch WHERE project_id = $1 AND env = $2 AND anonymous_id = $4
       ON CONFLICT (project_id, env, customer_id) DO NOTHING`,
      [scope.projectId, scope.env, customerId, anonymousId, atMs],
    );
  }

  /** Signups per source, most first: the sum of each source's count shards (a source counted down to zero is absent). */
  async signupsBySource(scope: TenantScope, limit: number): Promise<Array<{ source: string; signups: number }>> {
    const rows = await this.sql.rows<{ source: string; signups: string }>(
      `SELECT source, sum(signups) AS signups FROM acquisition_signup_counts WHERE project_id = $1 AND env = $2
        GROUP BY source HAVING sum(signups) > 0 ORDER BY sum(signups) DESC, source LIMIT $3`,
      [scope.projectId, scope.env, limit],
    );
    return rows.map((r) => ({ source: r.source, signups: Number(r.signups) }));
  }
}

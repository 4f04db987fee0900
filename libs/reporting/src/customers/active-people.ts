import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Clock, Sql, type TenantScope } from '#platform';
import { CustomerActivityFeed, type CustomerActivitySink } from '#telemetry';
import { dayOf } from '../revenue/price-normalisation.js';

export const ACTIVE_WINDOW_DAYS = 30;
const DAY_MS = 86_400_000;

/**
 * The customer's day row, its last active day, the per-day counts of last days, the day's
 * distinct active customers (`active_day_totals`, a new day row adds one) and its week's and
 * month's (`reporting_active_periods` and the counts of first and last days in
 * `active_period_days`), in one statement: the last day and a period's first and last days move
 * under their row locks, so `prev_day`, `prev_first` and `prev_last` are the days they really left.
 */
const RECORD_ACTIVE_DAY = `
WITH day_row AS (
  INSERT INTO reporting_active_days (project_id, env, day, customer_id) VALUES ($1, $2, $3::date, $4)
  ON CONFLICT ON CONSTRAINT reporting_active_days_pk DO NOTHING
  RETURNING 1
), period_row AS (
  INSERT INTO reporting_active_periods AS a (project_id, env, granularity, period, customer_id, first_day, last_day)
  SELECT $1, $2, g, date_trunc(g, $3::date::timestamp)::date, $4, $3::date, $3::date FROM day_row, (VALUES ('week'), ('month')) v(g)
  ON CONFLICT ON CONSTRAINT reporting_active_periods_pk DO UPDATE
    SET first_day = least(a.first_day, EXCLUDED.first_day), last_day = greatest(a.last_day, EXCLUDED.last_day),
        prev_first = a.first_day, prev_last = a.last_day
    WHERE EXCLUDED.first_day < a.first_day OR EXCLUDED.last_day > a.last_day
  RETURNING granularity, first_day, last_day, prev_first, prev_last
), period_days AS (
  INSERT INTO active_period_days AS e (project_id, env, granularity, day, firsts, lasts)
  SELECT $1, $2, granularity, day, sum(f), sum(l) FROM (
    SELECT granularity, first_day AS day, 1 AS f, 0 AS l FROM period_row WHERE prev_first IS DISTINCT FROM first_day
    UNION ALL SELECT granularity, prev_first, -1, 0 FROM period_row WHERE prev_first <> first_day
    UNION ALL SELECT granularity, last_day, 0, 1 FROM period_row WHERE prev_last IS DISTINCT FROM last_day
    UNION ALL SELECT granularity, prev_last, 0, -1 FROM period_row WHERE prev_last <> last_day
  ) m GROUP BY granularity, day ORDER BY granularity, day
  ON CONFLICT ON CONSTRAINT active_period_days_pk DO UPDATE SET firsts = e.firsts + EXCLUDED.firsts, lasts = e.lasts + EXCLUDED.lasts
  RETURNING 1
), moved AS (
  INSERT INTO reporting_active_last_days AS l (project_id, env, customer_id, day) VALUES ($1, $2, $4, $3::date)
  ON CONFLICT (project_id, env, customer_id) DO UPDATE SET day = EXCLUDED.day, prev_day = l.day WHERE l.day < EXCLUDED.day
  RETURNING day, prev_day
), day_total AS (
  INSERT INTO active_day_totals AS t (project_id, env, day, customers) SELECT $1, $2, $3::date, 1 FROM day_row
  ON CONFLICT (project_id, env, day) DO UPDATE SET customers = t.customers + 1
  RETURNING 1
)
INSERT INTO reporting_active_day_counts AS c (project_id, env, day, customers)
SELECT $1, $2, day, sum(n) FROM (SELECT day, 1 AS n FROM moved UNION ALL SELECT prev_day, -1 FROM moved WHERE prev_day IS NOT NULL) m
 GROUP BY day ORDER BY day
ON CONFLICT (project_id, env, day) DO UPDATE SET customers = c.customers + EXCLUDED.customers`;

/** SQL of the per-day distinct-active rollup and its counters. */
@Injectable()
export class ActiveDaysRepository {
  constructor(private readonly sql: Sql) {}

  async record(scope: TenantScope, day: string, customerId: string): Promise<void> {
    await this.sql.run(RECORD_ACTIVE_DAY, [scope.projectId, scope.env, day, customerId]);
  }

  /**
   * Distinct customers active on a day in [fromDay, toDay] (those whose last active day is in
   * it, the clock never running back); null when the rollup holds no day of the scope.
   */
  async distinctActive(scope: TenantScope, fromDay: string, toDay: string): Promise<number | null> {
    const row = await this.sql.one<{ n: string; any: boolean }>(
      `SELECT (SELECT coalesce(sum(customers), 0) FROM reporting_active_day_counts WHERE project_id = $1 AND env = $2 AND day BETWEEN $3::date AND $4::date) AS n,
              EXISTS (SELECT 1 FROM reporting_active_day_counts WHERE project_id = $1 AND env = $2) AS any`,
      [scope.projectId, scope.env, fromDay, toDay],
    );
    return row?.any ? Number(row.n) : null;
  }
}

/** Keeps the rollup from the telemetry context's activity feed and answers active people. */
@Injectable()
export class ActivePeople implements CustomerActivitySink, OnModuleInit {
  constructor(
    private readonly repository: ActiveDaysRepository,
    private readonly feed: CustomerActivityFeed,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.feed.attach(this);
  }

  active(scope: TenantScope, customerId: string, seenAtMs: number): Promise<void> {
    return this.repository.record(scope, dayOf(seenAtMs), customerId);
  }

  /** Distinct customers with an event in the last 30 UTC days (today included); null before the first. */
  count(scope: TenantScope): Promise<number | null> {
    const nowMs = this.clock.nowMs();
    return this.repository.distinctActive(scope, dayOf(nowMs - (ACTIVE_WINDOW_DAYS - 1) * DAY_MS), dayOf(nowMs));
  }
}

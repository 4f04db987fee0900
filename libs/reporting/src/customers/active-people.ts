import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Clock, Sql, type TenantScope } from '#platform';
import { CustomerActivityFeed, type CustomerActivitySink } from '#telemetry';
import { dayOf } from '../revenue/price-normalisation.js';

export const ACTIVE_WINDOW_DAYS = 30;
const DAY_MS = 86_400_000;

/** SQL of the per-day distinct-active rollup. */
@Injectable()
export class ActiveDaysRepository {
  constructor(private readonly sql: Sql) {}

  async record(scope: TenantScope, day: string, customerId: string): Promise<void> {
    await this.sql.rows(
      `INSERT INTO reporting_active_days (project_id, env, day, customer_id) VALUES ($1, $2, $3::date, $4)
       ON CONFLICT ON CONSTRAINT reporting_active_days_pk DO NOTHING`,
      [scope.projectId, scope.env, day, customerId],
    );
  }

  /** Distinct customers active on a day in [fromDay, toDay]; null when the rollup holds no day of the scope. */
  async distinctActive(scope: TenantScope, fromDay: string, toDay: string): Promise<number | null> {
    const row = await this.sql.one<{ n: string; any: boolean }>(
      `SELECT (SELECT count(DISTINCT customer_id) FROM reporting_active_days WHERE project_id = $1 AND env = $2 AND day BETWEEN $3::date AND $4::date) AS n,
              EXISTS (SELECT 1 FROM reporting_active_days WHERE project_id = $1 AND env = $2) AS any`,
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

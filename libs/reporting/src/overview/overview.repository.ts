import { Injectable } from '@nestjs/common';
import { Sql, type TenantScope } from '#platform';

/** Counts for the operator's overview, each an index probe of its scope. */
@Injectable()
export class OverviewRepository {
  constructor(private readonly sql: Sql) {}

  async activeSubscriptionsByRail(scope: TenantScope): Promise<Map<string, number>> {
    const rows = await this.sql.rows<{ rail: string; n: string }>(
      `SELECT rail, count(*) AS n FROM revenue_subscriptions WHERE project_id = $1 AND env = $2 AND active GROUP BY rail`,
      [scope.projectId, scope.env],
    );
    return new Map(rows.map((r) => [r.rail, Number(r.n)]));
  }

  /** Error issues of the scope; null when there is none (errors not instrumented). */
  async errorIssues(scope: TenantScope): Promise<number | null> {
    const row = await this.sql.one<{ n: string }>(`SELECT count(*) AS n FROM error_issues WHERE project_id = $1 AND env = $2`, [scope.projectId, scope.env]);
    const n = Number(row?.n ?? 0);
    return n > 0 ? n : null;
  }

  /**
   * Events of the scope whose client day is `day` ('YYYY-MM-DD', UTC): the equality on the
   * partition key prunes to that day's partition, and the primary key's leading columns
   * (project_id, env) make it an index-only count of that partition's rows of the scope.
   */
  async eventsOfDay(scope: TenantScope, day: string): Promise<number> {
    const row = await this.sql.one<{ n: string }>(`SELECT count(*) AS n FROM events WHERE project_id = $1 AND env = $2 AND client_day = $3::date`, [
      scope.projectId,
      scope.env,
      day,
    ]);
    return Number(row?.n ?? 0);
  }

  async deadJobs(scope: TenantScope): Promise<number> {
    const row = await this.sql.one<{ n: string }>(`SELECT count(*) AS n FROM jobs WHERE status = 'dead' AND project_id = $1 AND env = $2`, [
      scope.projectId,
      scope.env,
    ]);
    return Number(row?.n ?? 0);
  }
}

import { Injectable } from '@nestjs/common';
import { Sql, type TenantScope } from '#platform';
import type { Coverage, SurfaceCoverage } from './read-envelope.js';

/**
 * Which surfaces a project and environment are instrumented for. Point probes on the other
 * contexts' tables by their leading (project_id[, env]) index columns, never a scan: a
 * connected rail (revenue), an error issue (errors), a customer (userCensus), a bucket report (readCost),
 * a page-view rollup (analytics, since its first day).
 */
@Injectable()
export class CoverageRepository {
  constructor(private readonly sql: Sql) {}

  async coverage(scope: TenantScope): Promise<Coverage> {
    const row = await this.sql.one<{
      rail_since: Date | null;
      errors_since: string | null;
      customers: boolean;
      read_cost_since: string | null;
      analytics_since: string | null;
    }>(
      `SELECT (SELECT min(updated_at) FROM rail_settings WHERE project_id = $1 AND enabled) AS rail_since,
              (SELECT min(first_seen_ms) FROM (SELECT first_seen_ms FROM error_issues WHERE project_id = $1 AND env = $2 LIMIT 1000) e) AS errors_since,
              EXISTS (SELECT 1 FROM customers WHERE project_id = $1 AND env = $2) AS customers,
              (SELECT min(received_at_ms) FROM bucket_reports WHERE project_id = $1 AND env = $2) AS read_cost_since,
              (SELECT (extract(epoch FROM min(day)) * 1000)::bigint FROM analytics_daily_hosts WHERE project_id = $1 AND env = $2) AS analytics_since`,
      [scope.projectId, scope.env],
    );
    const railSince = row?.rail_since ? new Date(row.rail_since).getTime() : null;
    return {
      revenue: railSince !== null ? { state: 'measured', since: railSince } : { state: 'not_instrumented', since: null },
      errors: row?.errors_since != null ? { state: 'measured', since: Number(row.errors_since) } : { state: 'not_instrumented', since: null },
      analytics: row?.analytics_since != null ? { state: 'measured', since: Number(row.analytics_since) } : { state: 'not_instrumented', since: null },
      readCost: row?.read_cost_since != null ? { state: 'measured', since: Number(row.read_cost_since) } : { state: 'not_instrumented', since: null },
      userCensus: row?.customers ? { state: 'measured', since: null } : { state: 'not_instrumented', since: null },
    };
  }

  /** The revenue surface alone: measured since the first enabled rail of the project. */
  async revenue(scope: TenantScope): Promise<SurfaceCoverage> {
    const row = await this.sql.one<{ since: Date | null }>(`SELECT min(updated_at) AS since FROM rail_settings WHERE project_id = $1 AND enabled`, [
      scope.projectId,
    ]);
    return row?.since ? { state: 'measured', since: new Date(row.since).getTime() } : { state: 'not_instrumented', since: null };
  }

  /** The revenue surface and the read-cost one (measured since the first bucket report of the scope), in one statement. */
  async revenueAndReadCost(scope: TenantScope): Promise<{ revenue: SurfaceCoverage; readCost: SurfaceCoverage }> {
    const row = await this.sql.one<{ rail_since: Date | null; read_cost_since: string | null }>(
      `SELECT (SELECT min(updated_at) FROM rail_settings WHERE project_id = $1 AND enabled) AS rail_since,
              (SELECT min(received_at_ms) FROM bucket_reports WHERE project_id = $1 AND env = $2) AS read_cost_since`,
      [scope.projectId, scope.env],
    );
    return {
      revenue: row?.rail_since ? { state: 'measured', since: new Date(row.rail_since).getTime() } : { state: 'not_instrumented', since: null },
      readCost: row?.read_cost_since != null ? { state: 'measured', since: Number(row.read_cost_since) } : { state: 'not_instrumented', since: null },
    };
  }
}

import { Injectable } from '@nestjs/common';
import { Sql, type TenantScope } from '#platform';

/** Counts and listings of a scope's customers for the census reads (index probes on (project_id, env, …)). */
@Injectable()
export class CustomerCensusRepository {
  constructor(private readonly sql: Sql) {}

  /** Customers not forgotten: the sum of the scope's count shards, kept by triggers on customers. */
  async totalCustomers(scope: TenantScope): Promise<number> {
    const row = await this.sql.one<{ n: string }>(`SELECT coalesce(sum(customers), 0) AS n FROM reporting_customer_counts WHERE project_id = $1 AND env = $2`, [
      scope.projectId,
      scope.env,
    ]);
    return Number(row?.n ?? 0);
  }

  /** Customers without revenue, oldest first (the non-paying segment of a ranking). */
  async nonPaying(scope: TenantScope, limit: number): Promise<string[]> {
    const rows = await this.sql.rows<{ id: string }>(
      `SELECT c.id FROM customers c
        WHERE c.project_id = $1 AND c.env = $2 AND c.forgotten_at IS NULL
          AND NOT EXISTS (SELECT 1 FROM revenue_customer_totals r WHERE r.project_id = c.project_id AND r.env = c.env AND r.customer_id = c.id)
        ORDER BY c.id LIMIT $3`,
      [scope.projectId, scope.env, limit],
    );
    return rows.map((r) => r.id);
  }
}

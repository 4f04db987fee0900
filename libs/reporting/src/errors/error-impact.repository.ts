import { Injectable } from '@nestjs/common';
import { Sql, type TenantScope } from '#platform';

export interface AffectedCustomerRow {
  userId: string;
  lastHitMs: number;
  /** The user's customer, null when the user id is unknown or its customer forgotten. */
  customerId: string | null;
  /** The customer's monthly revenue in the reporting currency (numeric text), null when none. */
  monthlyMinor: string | null;
}

/**
 * An error's affected users joined to their customers and the revenue ledger in one statement
 * each: the most recent `window` users of the fingerprint (the telemetry rollup), each
 * developer user id's alias node and customer (identity), the customer's revenue totals
 * (the ledger). Every join is a probe of a primary key by its leading columns, so a read
 * costs a few probes per user of the window, however many users and customers the scope has.
 */
@Injectable()
export class ErrorImpactRepository {
  constructor(private readonly sql: Sql) {}

  /**
   * How many of the most recent `window` users have a customer (not forgotten) with revenue
   * in any currency. `whole`: the fingerprint has at most `window` users, so every row is in
   * the window and none is read for its last hit (the count reads index entries alone).
   */
  async payingUsers(scope: TenantScope, fingerprint: string, window: number, whole: boolean, developerType: string): Promise<number> {
    const users = whole
      ? `SELECT user_id FROM error_affected_users WHERE project_id = $1 AND env = $2 AND fingerprint = $3`
      : `SELECT user_id FROM error_affected_users WHERE project_id = $1 AND env = $2 AND fingerprint = $3 ORDER BY last_hit_ms DESC, user_id LIMIT $5`;
    const row = await this.sql.one<{ n: string }>(
      `SELECT count(*) AS n
         FROM (${users}) w
         JOIN customer_aliases a ON a.project_id = $1 AND a.env = $2 AND a.type = $4 AND a.value = w.user_id
         JOIN customers c ON c.id = a.customer_id AND c.forgotten_at IS NULL
        WHERE EXISTS (SELECT 1 FROM revenue_customer_totals r WHERE r.project_id = $1 AND r.env = $2 AND r.customer_id = a.customer_id)`,
      [scope.projectId, scope.env, fingerprint, developerType, ...(whole ? [] : [window])],
    );
    return Number(row?.n ?? 0);
  }

  /** The most recent `window` users, most recent first, with their customer and its monthly revenue in `currency`. */
  async affectedCustomers(scope: TenantScope, fingerprint: string, window: number, developerType: string, currency: string): Promise<AffectedCustomerRow[]> {
    const rows = await this.sql.rows<{ user_id: string; last_hit_ms: string; customer_id: string | null; monthly_minor: string | null }>(
      `SELECT w.user_id, w.last_hit_ms, k.customer_id, r.monthly_minor
         FROM (SELECT user_id, last_hit_ms FROM error_affected_users WHERE project_id = $1 AND env = $2 AND fingerprint = $3
                ORDER BY last_hit_ms DESC, user_id LIMIT $4) w
         LEFT JOIN LATERAL (SELECT a.customer_id FROM customer_aliases a JOIN customers c ON c.id = a.customer_id AND c.forgotten_at IS NULL
                             WHERE a.project_id = $1 AND a.env = $2 AND a.type = $5 AND a.value = w.user_id) k ON true
         LEFT JOIN revenue_customer_totals r ON r.project_id = $1 AND r.env = $2 AND r.customer_id = k.customer_id AND r.currency = $6
        ORDER BY w.last_hit_ms DESC, w.user_id`,
      [scope.projectId, scope.env, fingerprint, window, developerType, currency],
    );
    return rows.map((r) => ({ userId: r.user_id, lastHitMs: Number(r.last_hit_ms), customerId: r.customer_id, monthlyMinor: r.monthly_minor }));
  }
}

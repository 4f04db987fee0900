import { Injectable } from '@nestjs/common';
import { type TenantScope, Sql } from '#platform';

export interface IssueUserRow {
  customerId: string;
  userId: string | null;
  eventCount: number;
  lastHitMs: number;
}

/**
 * Who an issue hit, from its latest events only (events_fingerprint_idx read backwards, at
 * most `window` rows): the console's issue page stays an index read however old the issue.
 */
@Injectable()
export class IssueUsersRepository {
  constructor(private readonly sql: Sql) {}

  async recent(scope: TenantScope, fingerprint: string, window: number, limit: number): Promise<IssueUserRow[]> {
    return this.sql.rows<IssueUserRow>(
      `SELECT customer_id AS "customerId",
              (array_agg(developer_user_id ORDER BY timestamp_ms DESC) FILTER (WHERE developer_user_id IS NOT NULL))[1] AS "userId",
              count(*)::int AS "eventCount", max(timestamp_ms)::float8 AS "lastHitMs"
         FROM (SELECT customer_id, developer_user_id, timestamp_ms FROM events
                WHERE project_id = $1 AND env = $2 AND fingerprint = $3
                ORDER BY timestamp_ms DESC LIMIT $4) latest
        WHERE customer_id IS NOT NULL
        GROUP BY customer_id ORDER BY max(timestamp_ms) DESC LIMIT $5`,
      [scope.projectId, scope.env, fingerprint, window, limit],
    );
  }
}

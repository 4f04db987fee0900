import { Injectable } from '@nestjs/common';
import { Sql, type TenantScope } from '#platform';

export interface ErrorIssueRow {
  fingerprint: string;
  eventCount: number;
  firstSeenMs: number;
  lastSeenMs: number;
  lastEventName: string;
  lastLevel: string | null;
}

export interface AffectedCustomerRow {
  customerId: string;
  eventCount: number;
  lastSeenMs: number;
}

export interface LatestErrorEventRow {
  eventId: string;
  name: string;
  timestampMs: number;
  level: string | null;
  properties: Record<string, unknown>;
  context: Record<string, unknown> | null;
}

/** Reads of error issues (events grouped by their client fingerprint). */
@Injectable()
export class ErrorIssuesRepository {
  constructor(private readonly sql: Sql) {}

  async listRecent(scope: TenantScope, limit: number): Promise<ErrorIssueRow[]> {
    const rows = await this.sql.rows<ErrorIssueRow>(
      `SELECT fingerprint, event_count AS "eventCount", first_seen_ms AS "firstSeenMs", last_seen_ms AS "lastSeenMs",
              last_event_name AS "lastEventName", last_level AS "lastLevel"
         FROM error_issues WHERE project_id = $1 AND env = $2
        ORDER BY last_seen_ms DESC LIMIT $3`,
      [scope.projectId, scope.env, limit],
    );
    return rows.map(issueRow);
  }

  /** One issue's counters, or null when no event carried the fingerprint in this environment. */
  async findOne(scope: TenantScope, fingerprint: string): Promise<ErrorIssueRow | null> {
    const row = await this.sql.one<ErrorIssueRow>(
      `SELECT fingerprint, event_count AS "eventCount", first_seen_ms AS "firstSeenMs", last_seen_ms AS "lastSeenMs",
              last_event_name AS "lastEventName", last_level AS "lastLevel"
         FROM error_issues WHERE project_id = $1 AND env = $2 AND fingerprint = $3`,
      [scope.projectId, scope.env, fingerprint],
    );
    return row && issueRow(row);
  }

  /** The issue's most recent event (by event time), or null once retention has dropped them all. */
  async latestEvent(scope: TenantScope, fingerprint: string): Promise<LatestErrorEventRow | null> {
    const row = await this.sql.one<LatestErrorEventRow>(
      `SELECT event_id AS "eventId", name, timestamp_ms AS "timestampMs", level, properties, context
         FROM events
        WHERE project_id = $1 AND env = $2 AND fingerprint = $3
        ORDER BY timestamp_ms DESC LIMIT 1`,
      [scope.projectId, scope.env, fingerprint],
    );
    return row && { ...row, timestampMs: Number(row.timestampMs) };
  }

  /** Resolved customers hit by one issue, most recent first (row-level data). */
  async affectedCustomers(scope: TenantScope, fingerprint: string, limit: number): Promise<AffectedCustomerRow[]> {
    const rows = await this.sql.rows<Record<string, unknown>>(
      `SELECT customer_id AS "customerId", count(*)::bigint AS "eventCount", max(timestamp_ms) AS "lastSeenMs"
         FROM events
        WHERE project_id = $1 AND env = $2 AND fingerprint = $3 AND customer_id IS NOT NULL
        GROUP BY customer_id ORDER BY max(timestamp_ms) DESC LIMIT $4`,
      [scope.projectId, scope.env, fingerprint, limit],
    );
    return rows.map((r) => ({ customerId: String(r.customerId), eventCount: Number(r.eventCount), lastSeenMs: Number(r.lastSeenMs) }));
  }
}

/** bigint columns arrive as strings. */
const issueRow = (r: ErrorIssueRow): ErrorIssueRow => ({
  ...r,
  eventCount: Number(r.eventCount),
  firstSeenMs: Number(r.firstSeenMs),
  lastSeenMs: Number(r.lastSeenMs),
});

import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { TenantScope } from '../../../platform/src/index.js';

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

/** Reads of error issues (events grouped by their client fingerprint). */
@Injectable()
export class ErrorIssuesRepository {
  constructor(private readonly dataSource: DataSource) {}

  async listRecent(scope: TenantScope, limit: number): Promise<ErrorIssueRow[]> {
    const rows = await this.dataSource.query(
      `SELECT fingerprint, event_count AS "eventCount", first_seen_ms AS "firstSeenMs", last_seen_ms AS "lastSeenMs",
              last_event_name AS "lastEventName", last_level AS "lastLevel"
         FROM error_issues WHERE project_id = $1 AND env = $2
        ORDER BY last_seen_ms DESC LIMIT $3`,
      [scope.projectId, scope.env, limit],
    );
    return rows.map((r: Record<string, unknown>) => ({ ...r, eventCount: Number(r.eventCount), firstSeenMs: Number(r.firstSeenMs), lastSeenMs: Number(r.lastSeenMs) }));
  }

  /** Resolved customers hit by one issue, most recent first (row-level data). */
  async affectedCustomers(scope: TenantScope, fingerprint: string, limit: number): Promise<AffectedCustomerRow[]> {
    const rows = await this.dataSource.query(
      `SELECT customer_id AS "customerId", count(*)::bigint AS "eventCount", max(timestamp_ms) AS "lastSeenMs"
         FROM events
        WHERE project_id = $1 AND env = $2 AND fingerprint = $3 AND customer_id IS NOT NULL
        GROUP BY customer_id ORDER BY max(timestamp_ms) DESC LIMIT $4`,
      [scope.projectId, scope.env, fingerprint, limit],
    );
    return rows.map((r: Record<string, unknown>) => ({ customerId: String(r.customerId), eventCount: Number(r.eventCount), lastSeenMs: Number(r.lastSeenMs) }));
  }
}

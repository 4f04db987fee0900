import { Injectable } from '@nestjs/common';
import { ALIAS_TYPES } from '#identity';
import { Sql, type TenantScope } from '#platform';
import type { LatestErrorEventRow } from '../issues/error-issues.repository.js';

/** The orders of the console's issue list, each descending, ties by fingerprint. */
export const ISSUE_SORTS = ['last_seen', 'count', 'users', 'revenue_at_risk', 'first_seen'] as const;
export type IssueSort = (typeof ISSUE_SORTS)[number];

const SORT_KEY: Record<IssueSort, string> = {
  last_seen: 'i.last_seen_ms',
  count: 'i.event_count',
  users: 'COALESCE(u.users, 0)',
  revenue_at_risk: 'rv.minor',
  first_seen: 'i.first_seen_ms',
};

/**
 * An issue's revenue at risk: the monthly recurring revenue, in the project's reporting currency
 * (minor units), of the distinct customers its users are now (a user id's developer alias), read
 * from the revenue ledger's per-customer totals like the customer list. `$1`, `$2` are the scope;
 * `cur.currency` the reporting currency.
 */
const revenueAtRisk = (issue: string) => `LEFT JOIN LATERAL (
  SELECT COALESCE(sum(t.monthly_minor), 0)::bigint AS minor
    FROM (SELECT DISTINCT a.customer_id
            FROM error_affected_users au
            JOIN customer_aliases a ON a.project_id = $1 AND a.env = $2 AND a.type = '${ALIAS_TYPES.developer}' AND a.value = au.user_id
           WHERE au.project_id = $1 AND au.env = $2 AND au.fingerprint = ${issue}.fingerprint) hit
    JOIN revenue_customer_totals t ON t.project_id = $1 AND t.env = $2 AND t.customer_id = hit.customer_id AND t.currency = cur.currency) rv ON true`;
const REPORTING_CURRENCY = `CROSS JOIN (SELECT coalesce((SELECT currency FROM reporting_settings WHERE project_id = $1), 'USD') AS currency) cur`;

export interface ConsoleIssueRow {
  fingerprint: string;
  eventCount: number;
  firstSeenMs: number;
  lastSeenMs: number;
  lastEventName: string;
  lastLevel: string | null;
  affectedUsers: number;
  /** Monthly recurring revenue of the customers the issue hit, reporting currency, minor units. */
  revenueAtRiskMinor: number;
  currency: string;
  errorType: string | null;
  message: string | null;
  sortKey: number;
}

export interface IssueUserPageRow {
  userId: string;
  customerId: string | null;
  hits: number;
  lastHitMs: number;
}

/** Keyset position after a row: its sort value and its tie-breaker. */
export interface Keyset {
  value: number;
  id: string;
}

/**
 * The console's error reads: issues in a chosen order with the exception type and message of
 * their latest event (events_fingerprint_idx, one row per issue), an issue's events a page at
 * a time, and its affected users (error_affected_users) with their total.
 */
@Injectable()
export class ErrorIssuesConsoleRepository {
  constructor(private readonly sql: Sql) {}

  async list(scope: TenantScope, sort: IssueSort, after: Keyset | null, limit: number): Promise<ConsoleIssueRow[]> {
    const key = SORT_KEY[sort];
    // Sorting by revenue at risk works it out for every issue of the environment; the other
    // orders work it out for the page's issues only.
    const byRevenue = sort === 'revenue_at_risk';
    const rows = await this.sql.rows<Record<string, unknown>>(
      `SELECT s.*, t.error_type AS "errorType", t.message, ${byRevenue ? 's."sortKey"' : 'rv.minor'} AS "revenueAtRiskMinor", cur.currency
         FROM (SELECT i.fingerprint, i.event_count AS "eventCount", i.first_seen_ms AS "firstSeenMs", i.last_seen_ms AS "lastSeenMs",
                      i.last_event_name AS "lastEventName", i.last_level AS "lastLevel", COALESCE(u.users, 0) AS "affectedUsers",
                      ${key} AS "sortKey"
                 FROM error_issues i
                 LEFT JOIN error_affected_user_counts u ON u.project_id = i.project_id AND u.env = i.env AND u.fingerprint = i.fingerprint
                 ${byRevenue ? `${REPORTING_CURRENCY}\n                 ${revenueAtRisk('i')}` : ''}
                WHERE i.project_id = $1 AND i.env = $2
                  AND ($3::bigint IS NULL OR ${key} < $3::bigint OR (${key} = $3::bigint AND i.fingerprint > $4::text))
                ORDER BY ${key} DESC, i.fingerprint ASC
                LIMIT $5) s
         ${REPORTING_CURRENCY}
         ${byRevenue ? '' : revenueAtRisk('s')}
         LEFT JOIN LATERAL (
           SELECT left(COALESCE(e.properties->>'errorType', e.properties->>'type'), 256) AS error_type, left(e.properties->>'message', 1000) AS message
             FROM events e
            WHERE e.project_id = $1 AND e.env = $2 AND e.fingerprint = s.fingerprint AND json_typeof(e.properties) = 'object'
            ORDER BY e.timestamp_ms DESC LIMIT 1) t ON true
        ORDER BY s."sortKey" DESC, s.fingerprint ASC`,
      [scope.projectId, scope.env, after?.value ?? null, after?.id ?? null, limit],
    );
    return rows.map((r) => ({
      fingerprint: String(r.fingerprint),
      eventCount: Number(r.eventCount),
      firstSeenMs: Number(r.firstSeenMs),
      lastSeenMs: Number(r.lastSeenMs),
      lastEventName: String(r.lastEventName),
      lastLevel: (r.lastLevel as string | null) ?? null,
      affectedUsers: Number(r.affectedUsers),
      revenueAtRiskMinor: Number(r.revenueAtRiskMinor),
      currency: String(r.currency),
      errorType: (r.errorType as string | null) ?? null,
      message: (r.message as string | null) ?? null,
      sortKey: Number(r.sortKey),
    }));
  }

  /** The issue's events, newest first, after the keyset (event time, event id). */
  async events(scope: TenantScope, fingerprint: string, after: Keyset | null, limit: number): Promise<LatestErrorEventRow[]> {
    const rows = await this.sql.rows<LatestErrorEventRow>(
      `SELECT event_id AS "eventId", name, timestamp_ms AS "timestampMs", level, properties, context
         FROM events
        WHERE project_id = $1 AND env = $2 AND fingerprint = $3
          AND ($4::bigint IS NULL OR timestamp_ms < $4::bigint OR (timestamp_ms = $4::bigint AND event_id < $5::text))
        ORDER BY timestamp_ms DESC, event_id DESC LIMIT $6`,
      [scope.projectId, scope.env, fingerprint, after?.value ?? null, after?.id ?? null, limit],
    );
    return rows.map((r) => ({ ...r, timestampMs: Number(r.timestampMs) }));
  }

  /** Distinct developer user ids the issue hit (the same count as the list's). */
  async userTotal(scope: TenantScope, fingerprint: string): Promise<number> {
    const row = await this.sql.one<{ users: string }>(`SELECT users FROM error_affected_user_counts WHERE project_id = $1 AND env = $2 AND fingerprint = $3`, [
      scope.projectId,
      scope.env,
      fingerprint,
    ]);
    return row ? Number(row.users) : 0;
  }

  /**
   * The users the issue hit, most recent hit first (ties by user id), after the keyset, each
   * with the customer its latest event of the issue resolved to.
   */
  async users(scope: TenantScope, fingerprint: string, after: Keyset | null, limit: number): Promise<IssueUserPageRow[]> {
    const rows = await this.sql.rows<Record<string, unknown>>(
      `SELECT u.user_id AS "userId", u.hits, u.last_hit_ms AS "lastHitMs",
              (SELECT e.customer_id FROM events e
                WHERE e.project_id = $1 AND e.env = $2 AND e.fingerprint = $3 AND e.developer_user_id = u.user_id AND e.customer_id IS NOT NULL
                ORDER BY e.timestamp_ms DESC LIMIT 1) AS "customerId"
         FROM error_affected_users u
        WHERE u.project_id = $1 AND u.env = $2 AND u.fingerprint = $3
          AND ($4::bigint IS NULL OR u.last_hit_ms < $4::bigint OR (u.last_hit_ms = $4::bigint AND u.user_id > $5::text))
        ORDER BY u.last_hit_ms DESC, u.user_id ASC LIMIT $6`,
      [scope.projectId, scope.env, fingerprint, after?.value ?? null, after?.id ?? null, limit],
    );
    return rows.map((r) => ({
      userId: String(r.userId),
      customerId: (r.customerId as string | null) ?? null,
      hits: Number(r.hits),
      lastHitMs: Number(r.lastHitMs),
    }));
  }
}

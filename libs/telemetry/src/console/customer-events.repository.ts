import { Injectable } from '@nestjs/common';
import { type TenantScope, Sql } from '#platform';

export interface CustomerEventRow {
  eventId: string;
  name: string;
  timestampMs: number;
  level: 'error' | 'warning' | 'info' | null;
  fingerprint: string | null;
}

/** A customer's latest events (events_customer_recent_idx, newest first, bounded). */
@Injectable()
export class CustomerEventsRepository {
  constructor(private readonly sql: Sql) {}

  async latest(scope: TenantScope, customerId: string, limit: number): Promise<CustomerEventRow[]> {
    return this.sql.rows<CustomerEventRow>(
      `SELECT event_id AS "eventId", name, timestamp_ms::float8 AS "timestampMs", level, fingerprint
         FROM events WHERE project_id = $1 AND env = $2 AND customer_id = $3
        ORDER BY timestamp_ms DESC LIMIT $4`,
      [scope.projectId, scope.env, customerId, limit],
    );
  }
}
